import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOfferService } from "../../src/catalogue/service.js";
import { createMatchingService, type FoundMatches } from "../../src/matching/service.js";
import { createTestHolderContext, fakeClock, type TestHolderContext } from "../../src/testing.js";
import {
  carOffer,
  DAY_MS,
  flatOffer,
  insertIntent,
  matchesOf,
  setIntentStatus,
} from "../support/offer-helpers.js";

// Matching runs incrementally in both directions — a new offer against the active intents, a newly
// active intent against the current offers — and only ever for active, valid intents.

async function setup(engineDb: Parameters<typeof createTestHolderContext>[0]) {
  const clock = fakeClock();
  const ctx: TestHolderContext = await createTestHolderContext(engineDb, clock.now, { reset: true });
  const notified: string[][] = [];
  const inTransaction: FoundMatches[] = [];
  const matching = createMatchingService(ctx, {
    onMatched: (ids) => {
      notified.push([...ids].sort());
    },
    sink: {
      enqueueMatches: async (_trx, found) => {
        inTransaction.push(found);
      },
      catchUpMatches: async () => 0,
    },
  });
  const offers = createOfferService(ctx, matching);
  return { clock, ctx, matching, offers, notified, inTransaction };
}

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  it("a new catalogue offer is matched to the active intents it fits, delivered now, and onMatched hears of it", async () => {
    const { clock, ctx, matching, offers, notified, inTransaction } = await setup(engine.db);
    const fitting = await insertIntent(ctx, {
      criteria: { category: "vehicles", make: "skoda", fuel: "diesel" },
      budget_amount: 15_000,
      budget_currency: "EUR",
    });
    const other = await insertIntent(ctx, { criteria: { category: "vehicles", make: "Kia" } });
    await matching.start();
    expect(matching.activeIntents).toBe(2);

    const result = await offers.importCatalogue([carOffer()]);
    expect(result).toEqual({ inserted: 1, updated: 0, matched: 1 });
    const rows = await matchesOf(ctx, fitting);
    expect(rows).toHaveLength(1);
    expect(Number(rows[0]?.delivered_at)).toBe(clock.now());
    expect(await matchesOf(ctx, other)).toHaveLength(0);
    expect(notified).toEqual([[fitting]]);
    expect(inTransaction.map((found) => [found.count, found.intents])).toEqual([[1, [fitting]]]);
  });

  it("a newly activated intent reads the fitting current catalogue offers, and only catalogue offers", async () => {
    const { clock, ctx, matching, offers, notified } = await setup(engine.db);
    await matching.start();
    await offers.importCatalogue([
      flatOffer({}, { rooms: 3, areaM2: 72 }),
      flatOffer({}, { rooms: 1, areaM2: 30 }),
      flatOffer({ price: { amount: 9_000_000, currency: "CZK" } }, { rooms: 4, areaM2: 95 }),
      flatOffer({ location: { country: "CZ", region: "CZ-10" } }),
      carOffer(),
    ]);
    // A reply to some other intent must never reach this one.
    const pseudo = await insertIntent(ctx, {
      visibility: "pseudonymous",
      country: "CZ",
      criteria: { category: "property" },
    });
    await matching.onActivated(pseudo);
    expect(
      await offers.submitReply({
        source: { kind: "reply" },
        inReplyTo: pseudo,
        title: "Byt 3+1 Brno",
        category: "property",
        price: { amount: 5_000_000, currency: "CZK" },
        location: { country: "CZ", region: "CZ-64" },
        attributes: { kind: "flat", rooms: 3, areaM2: 80 },
      }),
    ).toEqual({ accepted: true });
    notified.length = 0;

    const id = await insertIntent(ctx, {
      status: "awaiting_email_confirmation",
      country: "CZ",
      region: "CZ-64",
      budget_amount: 7_000_000,
      budget_currency: "CZK",
      criteria: { category: "property", kind: "flat", roomsMin: 2 },
    });
    expect(await matching.onActivated(id)).toEqual({ matched: 0 }); // not active yet
    await setIntentStatus(ctx, id, "active");
    expect(await matching.onActivated(id)).toEqual({ matched: 1 });
    const rows = await matchesOf(ctx, id);
    expect(rows).toHaveLength(1);
    expect(notified).toEqual([[id]]);
    expect(Number(rows[0]?.delivered_at)).toBe(ctx.clock()); // delivered when it became active
    // A change of another field (the statement) announces nothing: the criteria did not change.
    clock.advance(1);
    await ctx.store.db
      .updateTable("holder_intents")
      .set({ statement: "a flat in Brno", updated_at: clock.now() })
      .where("id", "=", id)
      .execute();
    expect(await matching.onActivated(id)).toEqual({ matched: 0 });
    expect(notified).toHaveLength(1);
    expect(await matchesOf(ctx, id)).toHaveLength(1);
    // And the intent is in the index now: a new fitting offer reaches it.
    expect((await offers.importCatalogue([flatOffer({}, { rooms: 2, areaM2: 55 })])).matched).toBe(2);
  });

  it("drafts, intents awaiting confirmation, withdrawn and expired intents are never matched", async () => {
    const { clock, ctx, matching, offers } = await setup(engine.db);
    const criteria = { category: "vehicles" as const, make: "Škoda" };
    const drafts = [
      await insertIntent(ctx, { status: "awaiting_consent", criteria }),
      await insertIntent(ctx, { status: "awaiting_email_confirmation", criteria }),
      await insertIntent(ctx, { status: "withdrawn", criteria }),
      await insertIntent(ctx, { status: "expired", criteria }),
    ];
    // Still 'active' in the row, but past validUntil (expireDue has not run yet).
    const lapsed = await insertIntent(ctx, { criteria, valid_until: clock.now() + 1_000 });
    const live = await insertIntent(ctx, { criteria });
    await matching.start();
    expect(matching.activeIntents).toBe(2);
    clock.advance(1_000);
    expect((await offers.importCatalogue([carOffer()])).matched).toBe(1);
    expect(await matchesOf(ctx, live)).toHaveLength(1);
    for (const id of [...drafts, lapsed]) expect(await matchesOf(ctx, id)).toHaveLength(0);
    // The reverse direction too: onActivated on a non-active intent records nothing.
    for (const id of drafts) expect(await matching.onActivated(id)).toEqual({ matched: 0 });
    for (const id of drafts) expect(await matchesOf(ctx, id)).toHaveLength(0);
  });

  it("onEnded takes an intent out at once; a read shows nothing to an intent the index missed", async () => {
    const { clock, ctx, matching, offers } = await setup(engine.db);
    const criteria = { category: "vehicles" as const };
    const ended = await insertIntent(ctx, { criteria });
    const stale = await insertIntent(ctx, { criteria });
    await matching.start();
    await setIntentStatus(ctx, ended, "withdrawn");
    matching.onEnded(ended);
    expect(matching.matchOffer(carOffer())).not.toContain(ended);
    // Withdrawn by another process: this index was not told, so it proposes the intent (a
    // notification that finds nothing), but reading applies the rule to the row: no match.
    await setIntentStatus(ctx, stale, "withdrawn");
    clock.advance(1);
    expect(matching.matchOffer(carOffer())).toContain(stale);
    expect((await offers.importCatalogue([carOffer()])).matched).toBe(1);
    expect(await matchesOf(ctx, stale)).toHaveLength(0);
  });

  it("a changed catalogue offer is updated and matched again; an unchanged one is left alone", async () => {
    const { ctx, matching, offers } = await setup(engine.db);
    const cheap = await insertIntent(ctx, {
      criteria: { category: "vehicles" },
      budget_amount: 10_000,
      budget_currency: "EUR",
    });
    await matching.start();
    const offer = carOffer();
    expect(await offers.importCatalogue([offer])).toEqual({ inserted: 1, updated: 0, matched: 0 });
    expect(await offers.importCatalogue([offer])).toEqual({ inserted: 0, updated: 0, matched: 0 });
    const cheaper = { ...offer, price: { amount: 9_900, currency: "EUR" as const } };
    expect(await offers.importCatalogue([cheaper])).toEqual({ inserted: 0, updated: 1, matched: 1 });
    expect(await matchesOf(ctx, cheap)).toHaveLength(1);
    const stored = await ctx.store.db.selectFrom("holder_offers").selectAll().execute();
    expect(stored).toHaveLength(1);
    expect(Number(stored[0]?.price_amount)).toBe(9_900);
  });

  it("an import is validated whole before anything is written", async () => {
    const { ctx, matching, offers } = await setup(engine.db);
    await matching.start();
    const bad = { ...carOffer(), price: { amount: -1, currency: "EUR" } };
    await expect(offers.importCatalogue([carOffer(), bad as never])).rejects.toMatchObject({
      code: "ERR_HOLDER_INVALID",
      message: expect.stringContaining("offers[1].price.amount must be a whole number"),
    });
    expect(await ctx.store.db.selectFrom("holder_offers").select("id").execute()).toHaveLength(0);
  });

  it("start() loads every active intent across pages", async () => {
    const { ctx } = await setup(engine.db);
    for (let i = 0; i < 25; i++) await insertIntent(ctx, { criteria: { category: "vehicles" } });
    await insertIntent(ctx, { status: "awaiting_consent", criteria: { category: "vehicles" } });
    const matching = createMatchingService(ctx, { loadPageSize: 7 });
    expect(await matching.start()).toEqual({ activeIntents: 25 });
    expect(matching.matchOffer(carOffer())).toHaveLength(25);
    await ctx.store.db.updateTable("holder_intents").set({ status: "withdrawn" }).execute();
    expect(await matching.reload()).toEqual({ activeIntents: 0 });
  });

  it("an intent ended while the index is loading stays out of it", async () => {
    const { ctx } = await setup(engine.db);
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push(await insertIntent(ctx, { criteria: { category: "vehicles" } }));
    const matching = createMatchingService(ctx, { loadPageSize: 5 });
    const started = matching.start(); // reading pages now
    const ended = ids[11] as string;
    // Its row still says active, as when a page is read before the withdrawal commits.
    matching.onEnded(ended);
    expect(await started).toEqual({ activeIntents: 11 });
    expect(matching.matchOffer(carOffer())).not.toContain(ended);
  });

  it("an onMatched failure is logged without ids and does not undo the matches", async () => {
    const clock = fakeClock();
    const ctx = await createTestHolderContext(engine.db, clock.now, { reset: true });
    const id = await insertIntent(ctx, { criteria: { category: "vehicles" } });
    const matching = createMatchingService(ctx, {
      onMatched: () => {
        throw Object.assign(new Error(`mail to ${id} failed`), { code: "ESOCKET" });
      },
    });
    const offers = createOfferService(ctx, matching);
    expect((await offers.importCatalogue([carOffer()])).matched).toBe(1);
    expect(await matchesOf(ctx, id)).toHaveLength(1);
    const warning = ctx.logLines.find((line) => line.includes("onMatched failed"));
    expect(warning).toContain("ESOCKET");
    expect(ctx.logLines.join("\n")).not.toContain(id);
    clock.advance(DAY_MS);
  });
});
