import { regionInfo } from "@doorbell/intents";
import { describe, expect, it } from "vitest";
import { demoCatalogue } from "../../src/catalogue/demo-catalogue.js";
import { validateCatalogueOffers } from "../../src/catalogue/validate.js";

// The demo catalogue of `doorbell serve --demo`: the same for the same seed, valid, and plausible.

describe("demo catalogue", () => {
  const offers = demoCatalogue();

  it("is deterministic for a seed and differs between seeds", () => {
    expect(demoCatalogue()).toEqual(offers);
    const other = demoCatalogue({ seed: 2 });
    expect(other).toHaveLength(offers.length);
    expect(other.map((o) => o.title)).not.toEqual(offers.map((o) => o.title));
    expect(demoCatalogue({ count: 10 })).toEqual(offers.slice(0, 10));
  });

  it("has a few thousand offers that all pass catalogue validation with unique refs", () => {
    expect(offers).toHaveLength(3_000);
    expect(validateCatalogueOffers(offers)).toHaveLength(3_000);
  });

  it("mixes vehicles and property across both countries, priced in EUR in SK and CZK in CZ", () => {
    const share = (f: (o: (typeof offers)[number]) => boolean) => offers.filter(f).length / offers.length;
    expect(share((o) => o.category === "vehicles")).toBeGreaterThan(0.5);
    expect(share((o) => o.category === "vehicles")).toBeLessThan(0.7);
    expect(share((o) => o.location.country === "SK")).toBeGreaterThan(0.45);
    expect(share((o) => o.location.country === "SK")).toBeLessThan(0.65);
    for (const offer of offers) {
      expect(offer.price.currency).toBe(offer.location.country === "SK" ? "EUR" : "CZK");
      expect(regionInfo(offer.location.region ?? "")?.country).toBe(offer.location.country);
      expect(offer.url).toMatch(/^https:\/\/catalogue\.example\/(vehicles|property)\/demo-[VP]\d{6}$/);
    }
    const kinds = new Set(offers.filter((o) => o.category === "property").map((o) => o.attributes.kind));
    expect([...kinds].sort()).toEqual(["flat", "house", "land"]);
  });

  it("prices, years and mileages are plausible", () => {
    for (const offer of offers) {
      const a = offer.attributes;
      if (offer.category === "vehicles") {
        expect(a.year).toBeGreaterThanOrEqual(2008);
        expect(a.year).toBeLessThanOrEqual(2026);
        expect(a.mileageKm).toBeLessThan(500_000);
        const eur = offer.price.currency === "EUR" ? offer.price.amount : offer.price.amount / 25;
        expect(eur).toBeGreaterThanOrEqual(1_000);
        expect(eur).toBeLessThan(100_000);
        expect(offer.title).toContain(String(a.make));
      } else {
        const eur = offer.price.currency === "EUR" ? offer.price.amount : offer.price.amount / 25;
        expect(eur).toBeGreaterThanOrEqual(5_000);
        expect(eur).toBeLessThan(3_000_000);
        if (a.kind === "flat") expect(Number(a.areaM2) / Number(a.rooms)).toBeGreaterThan(12);
      }
    }
    // A Prague flat costs more per m² than one in Ústí nad Labem.
    const perM2 = (region: string) => {
      const flats = offers.filter((o) => o.location.region === region && o.attributes.kind === "flat");
      return flats.reduce((sum, o) => sum + o.price.amount / Number(o.attributes.areaM2), 0) / flats.length;
    };
    expect(perM2("CZ-10")).toBeGreaterThan(2 * perM2("CZ-42"));
  });

  it("publishes within the 60 days before `now`", () => {
    const now = Date.UTC(2027, 0, 15);
    for (const offer of demoCatalogue({ now, count: 200 })) {
      const at = Date.parse(offer.publishedAt ?? "");
      expect(at).toBeLessThanOrEqual(now);
      expect(at).toBeGreaterThan(now - 61 * 24 * 3_600_000);
    }
  });
});
