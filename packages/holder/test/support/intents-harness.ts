import type { EngineFixture } from "@doorbell/store/testing";
import { createConsentService } from "../../src/consent/index.js";
import type { HolderContext } from "../../src/context.js";
import { createIntentService, type EndReason, type IntentServiceOptions } from "../../src/intents/index.js";
import { HolderError, type PublishInput, type PublishResult } from "../../src/model/types.js";
import {
  createTestHolderContext,
  DAY,
  fakeClock,
  type TestHolderContext,
  type TestHolderContextOptions,
} from "../../src/testing.js";

export { DAY, HOUR, MINUTE, T0 } from "../../src/testing.js";

/** A statement, an area and a budget: the smallest intent an agent would publish. */
export const basicIntent = (more: Partial<PublishInput> = {}): PublishInput => ({
  statement: "A Škoda Octavia combi, diesel, at most 120,000 km, near Bratislava",
  criteria: { category: "vehicles", make: "Škoda", model: "Octavia", fuel: "diesel", mileageMaxKm: 120_000 },
  area: { country: "SK", region: "SK-BL" },
  budget: { amount: 15_000, currency: "EUR" },
  ...more,
});

export interface HookCall {
  hook: "onActivated" | "onEnded" | "onChanged";
  intentId: string;
  reason?: EndReason;
}

/** A holder on the engine's database with a fake clock, recorded hooks and both services. */
export async function holderOn(
  engine: EngineFixture,
  options: TestHolderContextOptions & {
    service?: IntentServiceOptions;
    ctx?: (ctx: TestHolderContext) => HolderContext;
  } = {},
) {
  const clock = fakeClock();
  const base = await createTestHolderContext(engine.db, clock.now, { reset: true, ...options });
  const ctx = options.ctx ? options.ctx(base) : base;
  const calls: HookCall[] = [];
  const hooks = {
    onActivated: (intentId: string) => void calls.push({ hook: "onActivated", intentId }),
    onEnded: (intentId: string, reason: EndReason) => void calls.push({ hook: "onEnded", intentId, reason }),
    onChanged: (intentId: string) => void calls.push({ hook: "onChanged", intentId }),
  };
  const intents = createIntentService(ctx, hooks, options.service);
  const consent = createConsentService(ctx, hooks);
  return { ctx, base, clock, calls, hooks, intents, consent, mailbox: base.mailbox };
}

export type Holder = Awaited<ReturnType<typeof holderOn>>;

export const tokenOf = (url: string): string => url.slice(url.lastIndexOf("/") + 1);

/** The confirm and manage tokens from the newest mail to `to`. */
export async function linksInMail(h: Holder, to: string) {
  const [mail] = await h.mailbox.listMailbox({ to, limit: 1 });
  if (mail === undefined) throw new Error("no mail");
  const confirm = /\/confirm\/([0-9A-Za-z]+)/.exec(mail.text)?.[1];
  const manage = /\/manage\/([0-9A-Za-z]+)/.exec(mail.text)?.[1];
  return { mail, confirm, manage };
}

/** Publish → consent → confirm: an active intent, with every secret the flow produced. */
export async function activeIntent(
  h: Holder,
  email = "jana.novakova@example.sk",
  input: PublishInput = basicIntent(),
) {
  const published = await h.intents.publish(input);
  const consentToken = tokenOf(published.consentUrl);
  await h.consent.giveConsent(consentToken, { email, accepted: true });
  const { confirm, manage } = await linksInMail(h, email);
  if (confirm === undefined || manage === undefined)
    throw new Error("links missing from the confirmation mail");
  const intent = await h.consent.confirmEmail(confirm);
  return { published, intent, consentToken, confirmToken: confirm, manageToken: manage, email };
}

export async function publishDraft(h: Holder, input: PublishInput = basicIntent()): Promise<PublishResult> {
  return h.intents.publish(input);
}

/** The HolderError a promise rejects with (fails the test when it resolves or throws anything else). */
export async function refusal(promise: Promise<unknown>): Promise<HolderError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof HolderError) return error;
    throw error;
  }
  throw new Error("expected a HolderError, but the call succeeded");
}

/**
 * Inserts a catalogue offer that fits `intentId` (its attributes taken from the intent's criteria)
 * and enters matching at `at`: a match of that intent, delivered at `at` if the intent's criteria
 * were in force by then. `region` places the offer elsewhere (then the intent must name no region).
 */
export async function recordMatch(
  h: Holder,
  intentId: string,
  offer: { id: string; title: string; price: number; at: number; url?: string; region?: string },
) {
  const db = h.ctx.store.db;
  const intent = await db
    .selectFrom("holder_intents")
    .selectAll()
    .where("id", "=", intentId)
    .executeTakeFirstOrThrow();
  const c = JSON.parse(intent.criteria_json ?? "{}") as Record<string, string | number | undefined>;
  const attributes =
    intent.category === "property"
      ? { kind: c.kind ?? "flat", rooms: c.roomsMin ?? 3, areaM2: c.areaMinM2 ?? 70 }
      : {
          make: c.make ?? "Škoda",
          model: c.model ?? "Octavia",
          year: c.yearMin ?? 2019,
          fuel: c.fuel ?? "diesel",
          mileageKm: Math.min(Number(c.mileageMaxKm ?? 90_000), 90_000),
        };
  const last = await db
    .selectFrom("holder_offers")
    .select((eb) => eb.fn.max("match_seq").as("seq"))
    .executeTakeFirst();
  await db
    .insertInto("holder_offers")
    .values({
      id: offer.id,
      source_kind: "catalogue",
      source_ref: `ref-${offer.id}`,
      seller: "Autobazar Test",
      in_reply_to: null,
      title: offer.title,
      description: null,
      category: intent.category ?? "vehicles",
      price_amount: offer.price,
      price_currency: intent.budget_currency ?? "EUR",
      country: intent.country,
      region: offer.region ?? intent.region ?? "SK-BL",
      url: offer.url ?? `https://catalogue.example.sk/${offer.id}`,
      attributes_json: JSON.stringify(attributes),
      published_at: offer.at - DAY,
      created_at: offer.at,
      withdrawn_at: null,
      matched_at: offer.at,
      match_seq: Number(last?.seq ?? 0) + 1,
    })
    .execute();
}
