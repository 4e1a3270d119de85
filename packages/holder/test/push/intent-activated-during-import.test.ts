/**
 * Issue 14 item 4: an intent activated while an import runs is still told about that import's
 * fitting offers, once. The person ticks a push subscription on the consent page and confirms while
 * a catalogue import is half-way; the subscriber's intent.matches.delivered doorbells must count
 * every fitting offer of both halves exactly once (their newMatches add up to the intent's
 * matches), whichever process imports and whichever path sees an offer first:
 * - another process imports and never hears of the activation (a `catalogue import` on SQLite, or
 *   a missed notification): the import's end catches up;
 * - another process imports and hears of it over LISTEN/NOTIFY (PostgreSQL): its refresh catches
 *   up, and the import's end finds nothing left to count;
 * - the same process imports, and the confirmation lands while a batch that matched without the
 *   intent is still open (PostgreSQL; SQLite's one connection cannot interleave them).
 */

import { createDeliveryEngine, type DeliveryEngineOptions } from "@doorbell/delivery";
import type { Database } from "@doorbell/store";
import { type EngineFixture, forEachEngine } from "@doorbell/store/testing";
import { developmentPolicy } from "@doorbell/webhooks";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHolderServices } from "../../src/app/services.js";
import { createOfferService } from "../../src/catalogue/service.js";
import { startIntentFeed } from "../../src/cluster/intent-feed.js";
import type { CatalogueOfferInput } from "../../src/model/services.js";
import { coalescedMatchesDoorbell } from "../../src/push/coalesced-doorbell.js";
import { createTestHolderContext, fakeClock } from "../../src/testing.js";
import { type AgentEndpoint, startAgentEndpoint } from "../support/push-endpoint.js";
import { mailsTo, publishDraft, type ServicesHolder } from "../support/services-harness.js";

const BATCH = 10;
const HALF = 3 * BATCH;

type Clock = ReturnType<typeof fakeClock>;

/** One holder process's services on its own handle, sharing the database and the test's clock. */
async function holderProcess(db: Database, clock: Clock) {
  const ctx = await createTestHolderContext(db, clock.now);
  const delivery = createDeliveryEngine({
    store: db as unknown as DeliveryEngineOptions["store"],
    sealer: ctx.sealer,
    policy: developmentPolicy(),
    clock: clock.now,
    coalesce: coalescedMatchesDoorbell,
  });
  const services = createHolderServices(ctx, { push: { engine: delivery } });
  await services.matching.start();
  // Small batches, so that each half of the import is several transactions.
  const offers = createOfferService(ctx, services.matching, { batchSize: BATCH });
  const h: ServicesHolder = { ctx, clock, services, delivery, runDue: () => delivery.runDue() };
  return { h, offers };
}

/** Offer `i`: every third one fits the Octavia intent (the others are too dear or another make). */
function offer(i: number): CatalogueOfferInput {
  const kind = i % 3;
  return {
    source: { kind: "catalogue", ref: `AD-${i}` },
    title: `Car ${i}`,
    category: "vehicles",
    price: { amount: kind === 1 ? 25_000 : 12_000, currency: "EUR" },
    location: { country: "SK", region: "SK-BL" },
    attributes: { make: kind === 2 ? "Volkswagen" : "Škoda", model: kind === 2 ? "Passat" : "Octavia" },
  } as CatalogueOfferInput;
}
const fitting = (from: number, to: number) => {
  let n = 0;
  for (let i = from; i < to; i++) if (i % 3 === 0) n++;
  return n;
};

/** The offers of both halves; the second waits for `resume` once the first is committed. */
function halves(): {
  offers: AsyncIterable<CatalogueOfferInput>;
  firstCommitted: Promise<void>;
  resume: () => void;
} {
  let reached: () => void = () => {};
  let resume: () => void = () => {};
  const firstCommitted = new Promise<void>((resolve) => {
    reached = resolve;
  });
  const gate = new Promise<void>((resolve) => {
    resume = resolve;
  });
  async function* offers() {
    for (let i = 0; i < HALF; i++) yield offer(i);
    // Asked for the next offer: the importer has committed the first half's last batch.
    reached();
    await gate;
    for (let i = HALF; i < 2 * HALF; i++) yield offer(i);
  }
  return { offers: offers(), firstCommitted, resume };
}

/** A draft with a subscription the person ticks on the consent page; `confirm` activates it. */
async function tickedDraft(h: ServicesHolder, endpoint: AgentEndpoint, email: string) {
  const draft = await publishDraft(h);
  const push = h.services.push as NonNullable<ServicesHolder["services"]["push"]>;
  const { subscriptionId } = await push.subscribe(
    { kind: "intent-code", intentId: draft.intentId },
    { delivery: { url: `${endpoint.url}/${email}`, secret: endpoint.secret } },
  );
  await h.services.consent.giveConsent(draft.consentUrl.slice(draft.consentUrl.lastIndexOf("/") + 1), {
    email,
    accepted: true,
  });
  await push.chooseOnConsent(draft.intentId, [subscriptionId]);
  const [mail] = await mailsTo(h, email);
  const confirmToken = /\/confirm\/([0-9A-Za-z]+)/.exec(mail?.text ?? "")?.[1] as string;
  return {
    ...draft,
    subscriptionId,
    confirm: () => h.services.consent.confirmEmail(confirmToken),
  };
}

/** Delivers everything due, past the 15-minute coalescing window, and adds up newMatches. */
async function countedMatches(h: ServicesHolder, endpoint: AgentEndpoint, subscriptionId: string) {
  for (let round = 0; round < 4; round++) {
    await h.runDue();
    h.clock.advance(16 * 60_000);
  }
  await h.runDue();
  const rung = endpoint
    .of("intent.matches.delivered")
    .filter((doorbell) => doorbell.data.subscriptionId === subscriptionId);
  return rung.reduce((sum, doorbell) => sum + (doorbell.data.newMatches as number), 0);
}

async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

forEachEngine({ describe, beforeAll, afterAll }, (engine: EngineFixture) => {
  let endpoint: AgentEndpoint;
  let clock: Clock;
  beforeAll(async () => {
    clock = fakeClock();
    endpoint = await startAgentEndpoint(clock.now);
  });
  afterAll(async () => {
    await endpoint.close();
  });

  async function twoProcesses() {
    await createTestHolderContext(engine.db, clock.now, { reset: true });
    const serving = await holderProcess(engine.db, clock);
    const importing = await holderProcess(await engine.connect(), clock);
    return { serving, importing };
  }

  it("another process imports and never hears of the activation: its import's end rings for the rest, once", async () => {
    const { serving, importing } = await twoProcesses();
    const intent = await tickedDraft(serving.h, endpoint, "unheard@example.sk");
    const feed = halves();
    const imported = importing.offers.importCatalogue(feed.offers);
    await feed.firstCommitted;
    await intent.confirm();
    feed.resume();
    expect(await imported).toMatchObject({ inserted: 2 * HALF });

    const matches = await serving.h.services.matching.listMatches({
      kind: "intent-code",
      intentId: intent.intentId,
    });
    expect(matches.matches).toHaveLength(fitting(0, 2 * HALF));
    expect(await countedMatches(serving.h, endpoint, intent.subscriptionId)).toBe(fitting(0, 2 * HALF));

    // Every catch-up again, in both processes: nothing is counted twice.
    for (const { h } of [serving, importing]) {
      await h.services.matching.refresh(intent.intentId);
      await h.services.matching.onActivated(intent.intentId);
      await h.services.matching.catchUpSince(0);
    }
    expect(await countedMatches(serving.h, endpoint, intent.subscriptionId)).toBe(fitting(0, 2 * HALF));
  });

  it("another process imports and hears of it (PostgreSQL): both catch-ups see the offers, each is counted once", async () => {
    if (engine.dialect !== "postgres") return; // one process owns a SQLite file: no feed
    const { serving, importing } = await twoProcesses();
    const log = pino({ level: "silent" });
    const feeds = [
      await startIntentFeed({
        store: serving.h.ctx.store as unknown as Database,
        matching: serving.h.services.matching,
        log,
      }),
      await startIntentFeed({
        store: importing.h.ctx.store as unknown as Database,
        matching: importing.h.services.matching,
        log,
      }),
    ];
    try {
      const intent = await tickedDraft(serving.h, endpoint, "heard@example.sk");
      const feed = halves();
      const imported = importing.offers.importCatalogue(feed.offers);
      await feed.firstCommitted;
      await intent.confirm();
      const fits = offer(0) as Parameters<typeof importing.h.services.matching.matchOffer>[0];
      await until(
        () => importing.h.services.matching.matchOffer(fits).includes(intent.intentId),
        "the importing process to hear of the activation",
      );
      feed.resume();
      await imported;
      expect(await countedMatches(serving.h, endpoint, intent.subscriptionId)).toBe(fitting(0, 2 * HALF));
    } finally {
      for (const feed of feeds) await feed.stop();
    }
  });

  it("the same process imports: a confirmation while a batch that matched without the intent is open", async () => {
    await createTestHolderContext(engine.db, clock.now, { reset: true });
    const { h, offers } = await holderProcess(engine.db, clock);
    const intent = await tickedDraft(h, endpoint, "same@example.sk");
    const matching = h.services.matching;
    const fits = offer(0) as Parameters<typeof matching.matchOffer>[0];
    const feed = halves();
    let confirming: Promise<unknown> | undefined;
    const imported = (async () => {
      if (engine.dialect === "sqlite") return offers.importCatalogue(feed.offers);
      // The second half's first batch has matched (without the intent) and not committed: the
      // person confirms now (from outside the batch's transaction). Before the fix the activation
      // read the committed offers and this batch committed after it, told to no one.
      let open: () => void = () => {};
      let proceed: () => void = () => {};
      const batchOpen = new Promise<void>((resolve) => {
        open = resolve;
      });
      const proceeded = new Promise<void>((resolve) => {
        proceed = resolve;
      });
      const matchNewOffers = matching.matchNewOffers.bind(matching);
      let batches = 0;
      matching.matchNewOffers = async (...args) => {
        const found = await matchNewOffers(...args);
        if (++batches === HALF / BATCH + 1) {
          open();
          await proceeded;
        }
        return found;
      };
      feed.resume();
      const importing = offers.importCatalogue(feed.offers);
      await batchOpen;
      confirming = intent.confirm();
      await Promise.race([
        confirming,
        until(() => matching.matchOffer(fits).includes(intent.intentId), "the index to hold the intent").then(
          () => new Promise((resolve) => setTimeout(resolve, 300)),
        ),
      ]);
      proceed();
      return importing;
    })();
    await feed.firstCommitted;
    if (engine.dialect === "sqlite") {
      // One connection: the confirmation commits between two batches.
      confirming = intent.confirm();
      await confirming;
      feed.resume();
    }
    await imported;
    await confirming;
    expect(await countedMatches(h, endpoint, intent.subscriptionId)).toBe(fitting(0, 2 * HALF));
  });
});
