import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { IntentIndex } from "../../src/matching/intent-index.js";
import { fits, type IntentFilterSource, intentFilter, offerFacts } from "../../src/matching/rule.js";
import type { Criteria, Currency, Offer } from "../../src/model/types.js";

// The matching rule as a table: each row changes one thing from a fitting pair and says whether
// the offer still fits. Every row runs through the rule (`fits`) and through the index (`match`),
// which must agree.

const NOW = Date.UTC(2026, 10, 30, 12);

type IntentSpec = {
  category?: "vehicles" | "property" | null;
  country?: "SK" | "CZ";
  region?: string | null;
  budget?: { amount: number; currency: Currency } | null;
  criteria?: Omit<Criteria, "category">;
  validUntil?: number;
};

function intentRow(spec: IntentSpec, id = "i1"): IntentFilterSource {
  const category = spec.category === undefined ? "vehicles" : spec.category;
  return {
    id,
    category,
    country: spec.country ?? "SK",
    region: spec.region ?? null,
    budget_amount: spec.budget ? spec.budget.amount : null,
    budget_currency: spec.budget ? spec.budget.currency : null,
    criteria_json: category && spec.criteria ? JSON.stringify({ category, ...spec.criteria }) : null,
    valid_until: spec.validUntil ?? NOW + 1,
  };
}

type OfferSpec = Partial<Pick<Offer, "category" | "price" | "location" | "attributes">>;

function offer(spec: OfferSpec = {}): Pick<Offer, "category" | "price" | "location" | "attributes"> {
  return {
    category: spec.category ?? "vehicles",
    price: spec.price ?? { amount: 10_000, currency: "EUR" },
    location: spec.location ?? { country: "SK", region: "SK-BL" },
    attributes: spec.attributes ?? {},
  };
}

function decide(intent: IntentSpec, o: OfferSpec): { rule: boolean; index: boolean } {
  const filter = intentFilter(intentRow(intent));
  const facts = offerFacts(offer(o));
  const index = new IntentIndex();
  if (filter) index.add(filter);
  return { rule: filter ? fits(filter, facts, NOW) : false, index: index.match(facts, NOW).includes("i1") };
}

const car = (attributes: Record<string, string | number>) => ({ attributes });
const flat = (
  attributes: Record<string, string | number>,
  price = { amount: 100_000, currency: "EUR" as const },
) => ({
  category: "property" as const,
  price,
  attributes: { kind: "flat", ...attributes },
});

const table: [name: string, intent: IntentSpec, offer: OfferSpec, fits: boolean][] = [
  ["same category and country, nothing else given", {}, {}, true],
  ["other category", {}, { category: "property" }, false],
  ["intent without a category (no criteria) is never matched", { category: null }, {}, false],
  ["other country", {}, { location: { country: "CZ", region: "CZ-10" } }, false],
  ["intent region equal", { region: "SK-BL" }, {}, true],
  ["intent region differs", { region: "SK-KI" }, {}, false],
  ["intent region given, offer has none", { region: "SK-BL" }, { location: { country: "SK" } }, false],
  ["intent without region takes an offer without region", {}, { location: { country: "SK" } }, true],
  ["price below budget", { budget: { amount: 10_001, currency: "EUR" } }, {}, true],
  ["price equal to budget (boundary)", { budget: { amount: 10_000, currency: "EUR" } }, {}, true],
  ["price one above budget (boundary)", { budget: { amount: 9_999, currency: "EUR" } }, {}, false],
  ["budget in another currency", { budget: { amount: 10_000_000, currency: "CZK" } }, {}, false],
  ["no budget takes any price", {}, { price: { amount: 999_999_999, currency: "CZK" } }, true],
  ["make equal ignoring case", { criteria: { make: "ŠKODA" } }, car({ make: "Škoda" }), true],
  ["make equal ignoring accents", { criteria: { make: "skoda" } }, car({ make: "Škoda" }), true],
  ["make differs", { criteria: { make: "Skoda" } }, car({ make: "Volkswagen" }), false],
  ["make given, offer has none", { criteria: { make: "Skoda" } }, car({}), false],
  [
    "model equal ignoring case and spaces",
    { criteria: { model: " octavia " } },
    car({ model: "Octavia" }),
    true,
  ],
  ["model differs", { criteria: { model: "Octavia" } }, car({ model: "Superb" }), false],
  [
    "make and model both hold",
    { criteria: { make: "Škoda", model: "Octavia" } },
    car({ make: "Škoda", model: "Octavia" }),
    true,
  ],
  [
    "make holds, model does not",
    { criteria: { make: "Škoda", model: "Fabia" } },
    car({ make: "Škoda", model: "Octavia" }),
    false,
  ],
  ["yearMin equal to year (boundary)", { criteria: { yearMin: 2018 } }, car({ year: 2018 }), true],
  ["yearMin one above year", { criteria: { yearMin: 2019 } }, car({ year: 2018 }), false],
  ["yearMin given, offer has no year", { criteria: { yearMin: 2000 } }, car({}), false],
  [
    "mileageMaxKm equal to mileage (boundary)",
    { criteria: { mileageMaxKm: 150_000 } },
    car({ mileageKm: 150_000 }),
    true,
  ],
  [
    "mileageMaxKm one below mileage",
    { criteria: { mileageMaxKm: 149_999 } },
    car({ mileageKm: 150_000 }),
    false,
  ],
  ["mileageMaxKm given, offer has no mileage", { criteria: { mileageMaxKm: 150_000 } }, car({}), false],
  ["mileage 0 fits any mileageMaxKm", { criteria: { mileageMaxKm: 0 } }, car({ mileageKm: 0 }), true],
  ["fuel equal", { criteria: { fuel: "diesel" } }, car({ fuel: "diesel" }), true],
  ["fuel differs", { criteria: { fuel: "diesel" } }, car({ fuel: "petrol" }), false],
  ["fuel given, offer has none", { criteria: { fuel: "electric" } }, car({}), false],
  ["kind equal", { category: "property", criteria: { kind: "flat" } }, flat({}), true],
  ["kind differs", { category: "property", criteria: { kind: "house" } }, flat({}), false],
  [
    "roomsMin equal to rooms (boundary)",
    { category: "property", criteria: { roomsMin: 3 } },
    flat({ rooms: 3 }),
    true,
  ],
  [
    "roomsMin one above rooms",
    { category: "property", criteria: { roomsMin: 4 } },
    flat({ rooms: 3 }),
    false,
  ],
  [
    "roomsMin given, offer has no rooms (land)",
    { category: "property", criteria: { roomsMin: 1 } },
    flat({ kind: "land" }),
    false,
  ],
  [
    "areaMinM2 equal to area (boundary)",
    { category: "property", criteria: { areaMinM2: 72.5 } },
    flat({ areaM2: 72.5 }),
    true,
  ],
  [
    "areaMinM2 just above area",
    { category: "property", criteria: { areaMinM2: 72.6 } },
    flat({ areaM2: 72.5 }),
    false,
  ],
  [
    "every property criterion holds with a budget",
    {
      category: "property",
      region: "SK-BL",
      budget: { amount: 100_000, currency: "EUR" },
      criteria: { kind: "flat", roomsMin: 2, areaMinM2: 50 },
    },
    flat({ rooms: 2, areaM2: 50 }),
    true,
  ],
  [
    "every vehicle criterion holds at its boundary",
    {
      region: "SK-BL",
      budget: { amount: 10_000, currency: "EUR" },
      criteria: { make: "Škoda", model: "Octavia", yearMin: 2018, mileageMaxKm: 150_000, fuel: "diesel" },
    },
    car({ make: "skoda", model: "OCTAVIA", year: 2018, mileageKm: 150_000, fuel: "diesel" }),
    true,
  ],
  ["validUntil already passed (still 'active' in the row)", { validUntil: NOW }, {}, false],
  ["numeric attribute given as digits", { criteria: { yearMin: 2018 } }, car({ year: "2019" }), true],
];

describe("matching rule table: rule and index agree", () => {
  it.each(table)("%s", (_name, intent, o, expected) => {
    expect(decide(intent, o)).toEqual({ rule: expected, index: expected });
  });

  it("the hidden limit is never read: the rule has no input for it", () => {
    const filter = intentFilter(intentRow({ budget: { amount: 10_000, currency: "EUR" } }));
    expect(Object.keys(filter ?? {}).some((key) => /hidden|limit/i.test(key))).toBe(false);
  });

  it("a row with unreadable criteria_json is not indexed (never a false match)", () => {
    expect(intentFilter({ ...intentRow({}), criteria_json: "{not json" })).toBeUndefined();
  });
});

describe("index removal and replacement", () => {
  it("a removed intent is not matched; re-adding replaces, not duplicates", () => {
    const index = new IntentIndex();
    const a = intentFilter(intentRow({ budget: { amount: 20_000, currency: "EUR" } }, "a"));
    const b = intentFilter(intentRow({ budget: { amount: 20_000, currency: "EUR" } }, "b"));
    if (!a || !b) throw new Error("filters");
    index.addMany([a, b]);
    const facts = offerFacts(offer());
    expect(index.match(facts, NOW).sort()).toEqual(["a", "b"]);
    expect(index.remove("a")).toBe(true);
    expect(index.remove("a")).toBe(false);
    expect(index.match(facts, NOW)).toEqual(["b"]);
    index.add(b);
    index.add(b);
    expect(index.size).toBe(1);
    expect(index.match(facts, NOW)).toEqual(["b"]);
  });

  it("returns every match when one offer fits more intents than its first buffer holds", () => {
    const index = new IntentIndex();
    const many = Array.from({ length: 10_000 }, (_, i) =>
      intentFilter(intentRow({ budget: { amount: 20_000 + i, currency: "EUR" } }, `i${i}`)),
    ).filter((f) => f !== undefined);
    index.addMany(many);
    const matched = index.match(offerFacts(offer()), NOW);
    expect(matched).toHaveLength(10_000);
    expect(new Set(matched).size).toBe(10_000);
  });
});

describe("index equals a linear scan with the rule (fast-check)", () => {
  const makes = ["Škoda", "skoda", "Volkswagen", "Kia"];
  const regions = ["SK-BL", "SK-KI", null];
  const intentArb = fc.record({
    category: fc.constantFrom("vehicles" as const, "property" as const),
    region: fc.constantFrom(...regions),
    budget: fc.option(
      fc.record({
        amount: fc.integer({ min: 1, max: 30_000 }),
        currency: fc.constantFrom("EUR" as const, "CZK" as const),
      }),
      { nil: null },
    ),
    criteria: fc.record(
      {
        make: fc.constantFrom(...makes),
        model: fc.constantFrom("Octavia", "octavia", "Ceed"),
        yearMin: fc.integer({ min: 2000, max: 2026 }),
        mileageMaxKm: fc.integer({ min: 0, max: 300_000 }),
        fuel: fc.constantFrom("diesel" as const, "petrol" as const),
        kind: fc.constantFrom("flat" as const, "house" as const),
        roomsMin: fc.integer({ min: 1, max: 5 }),
        areaMinM2: fc.integer({ min: 10, max: 200 }),
      },
      { requiredKeys: [] },
    ),
    validUntil: fc.constantFrom(NOW - 1, NOW + 1_000),
  });
  const offerArb = fc.record({
    category: fc.constantFrom("vehicles" as const, "property" as const),
    price: fc.record({
      amount: fc.integer({ min: 1, max: 30_000 }),
      currency: fc.constantFrom("EUR" as const, "CZK" as const),
    }),
    location: fc.constantFrom(
      { country: "SK" as const, region: "SK-BL" },
      { country: "SK" as const },
      { country: "SK" as const, region: "SK-KI" },
    ),
    attributes: fc.record(
      {
        make: fc.constantFrom(...makes),
        model: fc.constantFrom("Octavia", "Ceed"),
        year: fc.integer({ min: 2000, max: 2026 }),
        mileageKm: fc.integer({ min: 0, max: 300_000 }),
        fuel: fc.constantFrom("diesel", "petrol"),
        kind: fc.constantFrom("flat", "house"),
        rooms: fc.integer({ min: 1, max: 5 }),
        areaM2: fc.integer({ min: 10, max: 200 }),
      },
      { requiredKeys: [] },
    ),
  });

  it("for random intents and offers, match() returns exactly the intents fits() accepts", () => {
    fc.assert(
      fc.property(
        fc.array(intentArb, { maxLength: 60 }),
        fc.array(offerArb, { minLength: 1, maxLength: 10 }),
        (intents, offers) => {
          const index = new IntentIndex();
          const filters = intents
            .map((spec, i) => intentFilter(intentRow({ ...spec, criteria: spec.criteria }, `i${i}`)))
            .filter((f) => f !== undefined);
          // Half in bulk, half one by one: both paths keep budgets sorted.
          index.addMany(filters.slice(0, filters.length >> 1));
          for (const f of filters.slice(filters.length >> 1)) index.add(f);
          // Every third one leaves again (from sorted and unsorted shelves alike).
          const kept = filters.filter((f, i) => i % 3 !== 1 || !index.remove(f.id));
          expect(index.size).toBe(kept.length);
          for (const o of offers) {
            const facts = offerFacts(o);
            const expected = kept
              .filter((f) => fits(f, facts, NOW))
              .map((f) => f.id)
              .sort();
            expect(index.match(facts, NOW).sort()).toEqual(expected);
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it("tally() counts the same matches and lists each intent once per batch, and once per round", () => {
    let repeated = 0; // matches of an intent already matched in its batch: the case the tally folds
    fc.assert(
      fc.property(
        fc.array(intentArb, { maxLength: 60 }),
        // Each batch carries its offers twice, so every intent that fits one fits twice.
        fc.array(
          fc.array(offerArb, { maxLength: 4 }).map((offers) => [...offers, ...offers]),
          { minLength: 1, maxLength: 4 },
        ),
        (intents, batches) => {
          const index = new IntentIndex();
          index.addMany(
            intents
              .map((spec, i) => intentFilter(intentRow({ ...spec, criteria: spec.criteria }, `i${i}`)))
              .filter((f) => f !== undefined),
          );
          const round = 1;
          const reported = new Set<string>();
          batches.forEach((offers, b) => {
            const tally = { round, batch: 100 + b, first: [] as string[], inBatch: [] as string[] };
            let counted = 0;
            const matched: string[] = [];
            for (const o of offers) {
              const facts = offerFacts(o);
              counted += index.tally(facts, NOW, tally);
              matched.push(...index.match(facts, NOW));
            }
            const inBatch = [...new Set(matched)].sort();
            repeated += matched.length - inBatch.length;
            expect(counted).toBe(matched.length);
            expect([...tally.inBatch].sort()).toEqual(inBatch);
            expect([...tally.first].sort()).toEqual(inBatch.filter((id) => !reported.has(id)));
            for (const id of inBatch) reported.add(id);
          });
        },
      ),
      { numRuns: 300 },
    );
    expect(repeated).toBeGreaterThan(0);
  });
});
