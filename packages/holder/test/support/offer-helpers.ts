import { randomUUID } from "node:crypto";
import { readMatches, START } from "../../src/matching/reader.js";
import type { CatalogueOfferInput } from "../../src/model/services.js";
import { FRESH_MATCHING_STATE, type IntentRow } from "../../src/model/tables.js";
import type { Criteria } from "../../src/model/types.js";
import type { TestHolderContext } from "../../src/testing.js";

export const DAY_MS = 24 * 60 * 60 * 1000;

export interface IntentSeed extends Partial<Omit<IntentRow, "criteria_json">> {
  criteria?: Criteria;
}

/**
 * Writes an intent row straight into holder_intents (the intents service owns publishing and
 * consent; matching only reads the rows), active and valid for 30 days unless told otherwise.
 */
export async function insertIntent(ctx: TestHolderContext, seed: IntentSeed = {}): Promise<string> {
  const now = ctx.clock();
  const { criteria, ...columns } = seed;
  const id = columns.id ?? `int_${randomUUID()}`;
  await ctx.store.db
    .insertInto("holder_intents")
    .values({
      id,
      code_hash: `test-${randomUUID()}`,
      consent_token_hash: null,
      confirm_token_hash: null,
      manage_token_hash: null,
      status: "active",
      statement: "a test intent",
      criteria_json: criteria ? JSON.stringify(criteria) : null,
      category: criteria?.category ?? null,
      country: "SK",
      region: null,
      budget_amount: null,
      budget_currency: null,
      hidden_limit_sealed: null,
      buy_by: null,
      valid_until: now + 30 * DAY_MS,
      visibility: "private",
      pseudonym: null,
      contact_sealed: null,
      contact_hash: null,
      consent_version: null,
      draft_expires_at: null,
      confirm_expires_at: null,
      created_at: now,
      updated_at: now,
      consented_at: null,
      confirmed_at: null,
      ended_at: null,
      ...FRESH_MATCHING_STATE,
      // As the intents service does: an active intent's criteria are in force from now.
      matching_since: (columns.status ?? "active") === "active" ? now : null,
      ...columns,
    })
    .execute();
  return id;
}

export async function setIntentStatus(
  ctx: TestHolderContext,
  id: string,
  status: IntentRow["status"],
): Promise<void> {
  // As the intents service does: activation puts the criteria in force, ending records when.
  const now = ctx.clock();
  const last = await ctx.store.db
    .selectFrom("holder_offers")
    .select((eb) => eb.fn.max("match_seq").as("seq"))
    .executeTakeFirst();
  const when =
    status === "active"
      ? { matching_since: now, updated_at: now }
      : status === "withdrawn"
        ? { ended_at: now, ended_seq: Number(last?.seq ?? 0), updated_at: now }
        : status === "expired"
          ? { ended_at: now, updated_at: now }
          : {};
  await ctx.store.db
    .updateTable("holder_intents")
    .set({ status, ...when })
    .where("id", "=", id)
    .execute();
}

let refCounter = 0;

/** A valid catalogue vehicle offer (SK, EUR) with overrides. */
export function carOffer(
  over: Partial<CatalogueOfferInput> = {},
  attributes: Record<string, string | number> = {},
) {
  refCounter++;
  const offer: CatalogueOfferInput = {
    source: { kind: "catalogue", ref: `car-${refCounter}-${randomUUID().slice(0, 8)}` },
    title: "Škoda Octavia 2.0 TDI, 2018, 142 000 km",
    category: "vehicles",
    price: { amount: 14_900, currency: "EUR" },
    location: { country: "SK", region: "SK-BC" },
    attributes: {
      make: "Škoda",
      model: "Octavia",
      year: 2018,
      mileageKm: 142_000,
      fuel: "diesel",
      ...attributes,
    },
    publishedAt: "2026-11-20T08:00:00.000Z",
    ...over,
  };
  return offer;
}

/** A valid catalogue flat offer (CZ, CZK) with overrides. */
export function flatOffer(
  over: Partial<CatalogueOfferInput> = {},
  attributes: Record<string, string | number> = {},
) {
  refCounter++;
  const offer: CatalogueOfferInput = {
    source: { kind: "catalogue", ref: `flat-${refCounter}-${randomUUID().slice(0, 8)}` },
    title: "Prodej bytu 3+kk, 72 m², Brno",
    category: "property",
    price: { amount: 6_490_000, currency: "CZK" },
    location: { country: "CZ", region: "CZ-64" },
    attributes: { kind: "flat", rooms: 3, areaM2: 72, ...attributes },
    publishedAt: "2026-11-21T08:00:00.000Z",
    ...over,
  };
  return offer;
}

/** What reading the intent's matches shows (offer id, deliveredAt), oldest first. */
export async function matchesOf(ctx: TestHolderContext, intentId: string) {
  const read = await readMatches(ctx.store.db, intentId, START);
  return read.map(({ offer, deliveredAt }) => ({ offer_id: offer.id, delivered_at: deliveredAt }));
}
