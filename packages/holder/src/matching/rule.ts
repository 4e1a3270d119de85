import type { Category, Country, Criteria, Currency, Offer } from "../model/types.js";

/**
 * The matching rule, in one place. An offer fits an active intent when:
 *
 * - the category is the same, the country is the same, and the region is the same if the intent
 *   names one (an intent without a region takes the whole country);
 * - if the intent has a budget: the offer is in the budget's currency and its price is at most
 *   the budget (an intent without a budget takes any price in any currency);
 * - every criteria field the intent gives holds: make and model equal (ignoring case and accents,
 *   so "skoda" is "Škoda"), yearMin ≤ year, mileageKm ≤ mileageMaxKm, fuel equal, kind equal,
 *   roomsMin ≤ rooms, areaMinM2 ≤ areaM2. An offer that lacks the attribute a criterion needs
 *   does not fit;
 * - the intent is still valid (validUntil in the future).
 *
 * The hidden limit is never read: it stays sealed.
 */

/** What the index keeps of one active intent; absent criteria are the neutral value of their test. */
export interface IntentFilter {
  readonly id: string;
  readonly category: Category;
  readonly country: Country;
  readonly region: string | null;
  /** +Infinity when the intent has no budget. */
  readonly budget: number;
  /** null when the intent has no budget. */
  readonly currency: Currency | null;
  readonly make: string | null;
  readonly model: string | null;
  /** -Infinity when absent. */
  readonly yearMin: number;
  /** +Infinity when absent. */
  readonly mileageMaxKm: number;
  readonly fuel: string | null;
  readonly kind: string | null;
  /** -Infinity when absent. */
  readonly roomsMin: number;
  /** -Infinity when absent. */
  readonly areaMinM2: number;
  /** Epoch ms. */
  readonly validUntil: number;
}

/** An offer reduced to what the rule reads; a missing attribute fails any criterion on it. */
export interface OfferFacts {
  readonly category: Category;
  readonly country: Country;
  readonly region: string | null;
  readonly price: number;
  readonly currency: Currency;
  readonly make: string | null;
  readonly model: string | null;
  /** -Infinity when absent (fails any yearMin). */
  readonly year: number;
  /** +Infinity when absent (fails any mileageMaxKm). */
  readonly mileageKm: number;
  readonly fuel: string | null;
  readonly kind: string | null;
  /** -Infinity when absent. */
  readonly rooms: number;
  /** -Infinity when absent. */
  readonly areaM2: number;
}

/** What matching needs of an offer. */
export type MatchableOffer = Pick<Offer, "category" | "price" | "location" | "attributes">;

/** Case- and accent-insensitive form of a name: "  ŠKODA " → "skoda", "Citroën" → "citroen". */
export function fold(text: string): string {
  return text
    .normalize("NFD")
    .replace(/\p{M}+/gu, "")
    .toLowerCase()
    .trim()
    .replace(/\s+/g, " ");
}

/**
 * Folded names seen lately. Loading a million intents folds three or four names each, from a few
 * thousand distinct ones (makes, models, fuels, kinds): Unicode normalisation was a large share
 * of the load. Bounded, since the names come from users; one folded string per name also makes
 * the index's code look-ups hash it once.
 */
const foldedNames = new Map<string, string | null>();
const FOLDED_NAMES_MAX = 50_000;

function text(value: unknown): string | null {
  if (typeof value !== "string") return null;
  let folded = foldedNames.get(value);
  if (folded === undefined) {
    folded = value.trim() !== "" ? fold(value) : null;
    if (foldedNames.size >= FOLDED_NAMES_MAX) foldedNames.clear();
    foldedNames.set(value, folded);
  }
  return folded;
}

function number(value: unknown, absent: number): number {
  if (typeof value === "number" && Number.isFinite(value)) return value;
  if (typeof value === "string" && /^\s*-?\d+(\.\d+)?\s*$/.test(value)) return Number(value);
  return absent;
}

export function offerFacts(offer: MatchableOffer): OfferFacts {
  const a = offer.attributes ?? {};
  return {
    category: offer.category,
    country: offer.location.country,
    region: offer.location.region ?? null,
    price: offer.price.amount,
    currency: offer.price.currency,
    make: text(a.make),
    model: text(a.model),
    year: number(a.year, Number.NEGATIVE_INFINITY),
    mileageKm: number(a.mileageKm, Number.POSITIVE_INFINITY),
    fuel: text(a.fuel),
    kind: text(a.kind),
    rooms: number(a.rooms, Number.NEGATIVE_INFINITY),
    areaM2: number(a.areaM2, Number.NEGATIVE_INFINITY),
  };
}

/** The columns of holder_intents the rule needs. */
export interface IntentFilterSource {
  id: string;
  category: Category | null;
  country: Country;
  region: string | null;
  budget_amount: number | null;
  budget_currency: Currency | null;
  criteria_json: string | null;
  valid_until: number;
}

/**
 * The filter of one intent row, or undefined when the intent cannot be matched automatically: an
 * intent without a category (no criteria) is only a statement, and matching does not read prose.
 */
export function intentFilter(row: IntentFilterSource): IntentFilter | undefined {
  let criteria: Partial<Criteria> = {};
  if (row.criteria_json !== null) {
    try {
      const parsed: unknown = JSON.parse(row.criteria_json);
      if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) criteria = parsed;
    } catch {
      return undefined;
    }
  }
  const category = row.category ?? criteria.category ?? null;
  if (category !== "vehicles" && category !== "property") return undefined;
  const hasBudget = row.budget_amount !== null && row.budget_currency !== null;
  return {
    id: row.id,
    category,
    country: row.country,
    region: row.region ?? null,
    budget: hasBudget ? Number(row.budget_amount) : Number.POSITIVE_INFINITY,
    currency: hasBudget ? row.budget_currency : null,
    make: text(criteria.make),
    model: text(criteria.model),
    yearMin: number(criteria.yearMin, Number.NEGATIVE_INFINITY),
    mileageMaxKm: number(criteria.mileageMaxKm, Number.POSITIVE_INFINITY),
    fuel: text(criteria.fuel),
    kind: text(criteria.kind),
    roomsMin: number(criteria.roomsMin, Number.NEGATIVE_INFINITY),
    areaMinM2: number(criteria.areaMinM2, Number.NEGATIVE_INFINITY),
    validUntil: Number(row.valid_until),
  };
}

/**
 * The rule itself: whether `offer` fits `intent` at `now`. The index (intent-index.ts) applies the
 * same tests to its column arrays; a property test holds the two together.
 */
export function fits(intent: IntentFilter, offer: OfferFacts, now: number): boolean {
  return (
    intent.category === offer.category &&
    intent.country === offer.country &&
    (intent.region === null || intent.region === offer.region) &&
    (intent.currency === null || (intent.currency === offer.currency && offer.price <= intent.budget)) &&
    (intent.make === null || intent.make === offer.make) &&
    (intent.model === null || intent.model === offer.model) &&
    offer.year >= intent.yearMin &&
    offer.mileageKm <= intent.mileageMaxKm &&
    (intent.fuel === null || intent.fuel === offer.fuel) &&
    (intent.kind === null || intent.kind === offer.kind) &&
    offer.rooms >= intent.roomsMin &&
    offer.areaM2 >= intent.areaMinM2 &&
    intent.validUntil > now
  );
}
