import { describe, expect, it } from "vitest";
import {
  checkCatalogueOffer,
  checkReplyOffer,
  validateCatalogueOffers,
} from "../../src/catalogue/validate.js";
import { carOffer, flatOffer } from "../support/offer-helpers.js";

// Offer validation names the field, the rule and what was given, so a seller or an importer can fix
// the input without guessing.

describe("offer validation messages", () => {
  const problems = (value: unknown) => checkCatalogueOffer(value, "offer").problems;

  it("accepts and normalises a valid offer (trimmed text, canonical publishedAt)", () => {
    const checked = checkCatalogueOffer(
      { ...carOffer({ title: "  Octavia  " }), publishedAt: "2026-11-20T09:00:00+01:00" },
      "offer",
    );
    expect(checked.problems).toEqual([]);
    expect(checked.value?.title).toBe("Octavia");
    expect(checked.value?.publishedAt).toBe("2026-11-20T08:00:00.000Z");
  });

  it.each([
    [{ title: "" }, "offer.title must not be empty"],
    [{ title: "x".repeat(201) }, "offer.title must be at most 200 characters (got 201)"],
    [{ title: "bell\u0007" }, "offer.title must not contain control characters"],
    [{ category: "boats" }, 'offer.category must be one of "vehicles", "property" (got "boats")'],
    [
      { price: { amount: 0, currency: "EUR" } },
      "offer.price.amount must be a whole number from 1 to 1000000000000 (whole currency units; got 0)",
    ],
    [
      { price: { amount: 12.5, currency: "EUR" } },
      "offer.price.amount must be a whole number from 1 to 1000000000000 (whole currency units; got 12.5)",
    ],
    [
      { price: { amount: 1, currency: "USD" } },
      'offer.price.currency must be one of "EUR", "CZK" (got "USD")',
    ],
    [{ price: "1000 EUR" }, 'offer.price is required: an object { amount, currency } (got "1000 EUR")'],
    [{ location: { country: "AT" } }, 'offer.location.country must be one of "SK", "CZ" (got "AT")'],
    [
      { location: { country: "SK", region: "CZ-10" } },
      'offer.location.region must be an ISO 3166-2 region code of SK such as "SK-BL" (got "CZ-10")',
    ],
    [
      { url: "javascript:alert(1)" },
      'offer.url must be an absolute http or https URL (got "javascript:alert(1)")',
    ],
    [
      { publishedAt: "yesterday" },
      'offer.publishedAt must be an ISO 8601 date-time with a time zone, e.g. "2026-11-30T12:00:00Z" (got "yesterday")',
    ],
    [
      { publishedAt: "2026-11-20T08:00:00" },
      expect.stringContaining("offer.publishedAt must be an ISO 8601 date-time with a time zone"),
    ],
    [
      { source: { kind: "reply", ref: "x" } },
      'offer.source.kind must be "catalogue" for a catalogue offer (got "reply")',
    ],
    [{ source: { kind: "catalogue" } }, "offer.source.ref is required"],
    [{ inReplyTo: "int_1" }, expect.stringContaining("offer.inReplyTo is not a field of an offer here")],
    [
      { attributes: { year: 1899 } },
      "offer.attributes.year must be a whole number from 1900 to 2100 (got 1899)",
    ],
    [
      { attributes: { mileageKm: -1 } },
      "offer.attributes.mileageKm must be a whole number from 0 to 5000000 (got -1)",
    ],
    [
      { attributes: { fuel: "coal" } },
      'offer.attributes.fuel must be one of "petrol", "diesel", "hybrid", "electric", "lpg" (got "coal")',
    ],
    [{ attributes: { rooms: 3 } }, "offer.attributes.rooms applies to property offers, not vehicles"],
    [
      { attributes: { "bad key": 1 } },
      'offer.attributes has an invalid name "bad key": a letter, then letters, digits or _ (at most 40)',
    ],
    [
      { attributes: { colour: { r: 1 } } },
      "offer.attributes.colour must be a string or a finite number (got an object)",
    ],
    [{ attributes: [] }, "offer.attributes must be an object of names to strings or numbers (got an array)"],
    [{ email: "buyer@example.com" }, expect.stringContaining("offer.email is not a field of an offer here")],
  ])("%j → %s", (change, message) => {
    expect(problems({ ...carOffer(), ...change })).toEqual([message]);
  });

  it("property attributes have their own ranges", () => {
    expect(problems(flatOffer({}, { kind: "castle" }))).toEqual([
      'offer.attributes.kind must be one of "flat", "house", "land" (got "castle")',
    ]);
    expect(problems(flatOffer({}, { areaM2: 0 }))).toEqual([
      "offer.attributes.areaM2 must be a number from 1 to 100000000 (got 0)",
    ]);
    expect(problems(flatOffer({}, { make: "Škoda" }))).toEqual([
      "offer.attributes.make applies to vehicles offers, not property",
    ]);
  });

  it("takes keys such as constructor or toString as plain attribute names (issue 16 item 18)", () => {
    const offer = carOffer({ attributes: { make: "Škoda", constructor: "Bosch", toString: 3 } });
    const checked = checkCatalogueOffer(offer, "offer");
    expect(checked.problems).toEqual([]);
    expect(checked.value?.attributes).toEqual({ make: "Škoda", constructor: "Bosch", toString: 3 });
  });

  it("reports every problem at once", () => {
    expect(problems({ source: { kind: "catalogue", ref: "r" } })).toEqual([
      "offer.title is required",
      'offer.category is required (one of "vehicles", "property")',
      "offer.price is required: an object { amount, currency } (got nothing)",
      "offer.location is required: an object { country, region? } (got nothing)",
    ]);
    expect(problems(null)).toEqual(["offer must be an object (got null)"]);
  });

  it("an import names the offer by index and refuses a repeated source.ref", () => {
    const a = carOffer();
    expect(() => validateCatalogueOffers([a, carOffer(), { ...a, title: "again" }])).toThrow(
      `offers[2].source.ref "${a.source.ref}" repeats offers[0]`,
    );
  });

  it("a reply needs inReplyTo and source.kind reply, and takes no publishedAt", () => {
    const { source: _s, publishedAt: _p, ...rest } = carOffer();
    expect(checkReplyOffer({ ...rest, source: { kind: "reply" }, inReplyTo: "int_1" }).problems).toEqual([]);
    expect(checkReplyOffer({ ...rest, source: { kind: "reply" } }).problems).toEqual([
      "offer.inReplyTo is required",
    ]);
    expect(
      checkReplyOffer({
        ...rest,
        source: { kind: "reply" },
        inReplyTo: "int_1",
        publishedAt: "2026-11-20T08:00:00Z",
      }).problems,
    ).toEqual([expect.stringContaining("offer.publishedAt is not a field of an offer here")]);
  });
});
