/**
 * Every field of intent_publish_intent is checked by the domain with a message that says what is
 * wrong: lengths, ISO 8601 dates in the future, the validity limit, money, criteria per category,
 * areas. A refused publish stores nothing.
 */
import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseIsoInstant } from "../../src/intents/index.js";
import type { PublishInput } from "../../src/model/types.js";
import { basicIntent, DAY, holderOn, refusal, T0 } from "../support/intents-harness.js";

const future = new Date(T0 + 10 * DAY).toISOString();
const past = new Date(T0 - 1).toISOString();

const cases: [string, Record<string, unknown>, string][] = [
  ["no statement", { statement: undefined }, "statement must be a string of 1 to 2000 characters"],
  ["an empty statement", { statement: "   " }, "statement must be 1 to 2000 characters (it has 0"],
  [
    "a 2001-character statement",
    { statement: "x".repeat(2001) },
    "statement must be 1 to 2000 characters (it has 2001",
  ],
  [
    "a statement with a control character",
    { statement: "car\u0000" },
    "statement must not contain control characters",
  ],
  ["no area", { area: undefined }, "area must be an object"],
  ["a country outside SK and CZ", { area: { country: "AT" } }, "area.country must be one of SK, CZ"],
  [
    "a region of another country",
    { area: { country: "SK", region: "CZ-10" } },
    "area.region must be an ISO 3166-2 region code of SK",
  ],
  ["a made-up region", { area: { country: "SK", region: "SK-XX" } }, "one of SK-BC, SK-BL"],
  ["a lower-case region", { area: { country: "CZ", region: "cz-10" } }, "region code of CZ"],
  ["an extra area field", { area: { country: "SK", city: "Nitra" } }, 'area has no field "city"'],
  [
    "a zero budget",
    { budget: { amount: 0, currency: "EUR" } },
    "budget.amount must be a whole number from 1",
  ],
  [
    "a fractional budget",
    { budget: { amount: 10.5, currency: "EUR" } },
    "budget.amount must be a whole number",
  ],
  [
    "a budget in dollars",
    { budget: { amount: 100, currency: "USD" } },
    "budget.currency must be one of EUR, CZK",
  ],
  ["a budget as a number", { budget: 15000 }, "budget must be an object"],
  ["a negative hidden limit", { hiddenLimit: -5 }, "hiddenLimit must be a positive number"],
  ["a zero hidden limit", { hiddenLimit: 0 }, "hiddenLimit must be a positive number"],
  ["a hidden limit as text", { hiddenLimit: "20000" }, "hiddenLimit must be a positive number"],
  [
    "an infinite hidden limit",
    { hiddenLimit: Number.POSITIVE_INFINITY },
    "hiddenLimit must be a positive number",
  ],
  [
    "criteria without a category",
    { criteria: { make: "Škoda" } },
    "criteria.category must be one of vehicles, property",
  ],
  [
    "a property field on vehicles",
    { criteria: { category: "vehicles", roomsMin: 2 } },
    "criteria.roomsMin applies to property, not vehicles",
  ],
  [
    "a vehicle field on property",
    { criteria: { category: "property", fuel: "diesel" } },
    "criteria.fuel applies to vehicles, not property",
  ],
  [
    "an unknown criteria field",
    { criteria: { category: "vehicles", colour: "red" } },
    'criteria has no field "colour"',
  ],
  [
    "a year before 1900",
    { criteria: { category: "vehicles", yearMin: 1800 } },
    "criteria.yearMin must be a whole number from 1900 to 2027",
  ],
  [
    "an unknown fuel",
    { criteria: { category: "vehicles", fuel: "coal" } },
    "criteria.fuel must be one of petrol, diesel, hybrid, electric, lpg",
  ],
  [
    "an empty make",
    { criteria: { category: "vehicles", make: "" } },
    "criteria.make must be 1 to 60 characters",
  ],
  [
    "a negative mileage",
    { criteria: { category: "vehicles", mileageMaxKm: -1 } },
    "criteria.mileageMaxKm must be a whole number from 0",
  ],
  [
    "an unknown property kind",
    { criteria: { category: "property", kind: "castle" } },
    "criteria.kind must be one of flat, house, land",
  ],
  [
    "zero rooms",
    { criteria: { category: "property", roomsMin: 0 } },
    "criteria.roomsMin must be a whole number from 1 to 20",
  ],
  [
    "a negative floor area",
    { criteria: { category: "property", areaMinM2: -40 } },
    "criteria.areaMinM2 must be a positive number",
  ],
  ["validUntil in the past", { validUntil: past }, "validUntil must be in the future"],
  ["validUntil now", { validUntil: new Date(T0).toISOString() }, "validUntil must be in the future"],
  [
    "validUntil beyond the longest validity",
    { validUntil: new Date(T0 + 366 * DAY).toISOString() },
    "validUntil must be at most 365 days from now",
  ],
  ["validUntil in a local format", { validUntil: "31.12.2026" }, "validUntil must be an ISO 8601 date"],
  [
    "validUntil without a time zone",
    { validUntil: "2026-12-24T10:00:00" },
    "validUntil must be an ISO 8601 date",
  ],
  ["validUntil on 30 February", { validUntil: "2027-02-30" }, "validUntil is not a real calendar date"],
  [
    "validUntil at 25 o'clock",
    { validUntil: "2026-12-24T25:00:00Z" },
    "validUntil is not a real calendar date and time",
  ],
  ["validUntil as a number", { validUntil: T0 + DAY }, "validUntil must be an ISO 8601 date"],
  ["buyBy in the past", { buyBy: past }, "buyBy must be in the future"],
  ["buyBy not a date", { buyBy: "soon" }, "buyBy must be an ISO 8601 date"],
  ["an unknown visibility", { visibility: "public" }, "visibility must be one of private, pseudonymous"],
  ["an undeclared field", { colour: "red" }, 'the intent has no field "colour"'],
];

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  it.each(cases)("refuses %s with a precise message and stores nothing", async (_name, change, message) => {
    const h = await holderOn(engine);
    const input = { ...basicIntent(), ...change } as Record<string, unknown>;
    for (const key of Object.keys(change)) if (change[key] === undefined) delete input[key];
    const error = await refusal(h.intents.publish(input as unknown as PublishInput));
    expect(error.code).toBe("ERR_HOLDER_INVALID");
    expect(error.message).toContain(message);
    expect(await h.ctx.store.db.selectFrom("holder_intents").select("id").execute()).toEqual([]);
  });

  it("refuses input that is not an object", async () => {
    const h = await holderOn(engine);
    for (const input of [null, "a car", 42, []]) {
      const error = await refusal(h.intents.publish(input as never));
      expect(error.code).toBe("ERR_HOLDER_INVALID");
    }
  });

  it("accepts every field at its limits and shows them back", async () => {
    const h = await holderOn(engine);
    const statement = "ž".repeat(2000);
    const { intent } = await h.intents.publish({
      statement: `  ${statement}  `,
      criteria: { category: "property", kind: "flat", roomsMin: 3, areaMinM2: 65.5 },
      area: { country: "CZ", region: "CZ-64" },
      budget: { amount: 6_500_000, currency: "CZK" },
      hiddenLimit: 7_000_000,
      buyBy: "2027-03-31",
      validUntil: new Date(T0 + 365 * DAY).toISOString(),
      visibility: "pseudonymous",
    });
    expect(intent).toMatchObject({
      statement,
      criteria: { category: "property", kind: "flat", roomsMin: 3, areaMinM2: 65.5 },
      area: { country: "CZ", region: "CZ-64" },
      budget: { amount: 6_500_000, currency: "CZK" },
      hasHiddenLimit: true,
      buyBy: "2027-03-31T23:59:59.999Z",
      validUntil: new Date(T0 + 365 * DAY).toISOString(),
      visibility: "pseudonymous",
    });
    // Nothing of the hidden limit leaks into the shown intent.
    expect(JSON.stringify(intent)).not.toContain("7000000");
    const row = await h.ctx.store.db
      .selectFrom("holder_intents")
      .selectAll()
      .where("id", "=", intent.id)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      category: "property",
      country: "CZ",
      region: "CZ-64",
      buy_by: Date.UTC(2027, 2, 31, 23, 59, 59, 999),
    });
  });

  it("takes date-times with offsets and dates as the end of that day (UTC)", () => {
    expect(parseIsoInstant("2026-12-24T10:00:00+01:00", "x")).toBe(Date.UTC(2026, 11, 24, 9));
    expect(parseIsoInstant("2026-12-24T10:00Z", "x")).toBe(Date.UTC(2026, 11, 24, 10));
    expect(parseIsoInstant("2026-12-24t10:00:00.123z", "x")).toBe(Date.UTC(2026, 11, 24, 10, 0, 0, 123));
    expect(parseIsoInstant("2028-02-29", "x")).toBe(Date.UTC(2028, 1, 29, 23, 59, 59, 999));
    expect(() => parseIsoInstant("2027-02-29", "x")).toThrow("not a real calendar date");
    expect(() => parseIsoInstant(future.replace("Z", ""), "x")).toThrow("ISO 8601");
  });
});
