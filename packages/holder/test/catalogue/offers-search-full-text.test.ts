import { migrate, type PackageMigrations } from "@doorbell/store";
import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { holderMigrations } from "../../src/app/migrations.js";
import { demoCatalogue } from "../../src/catalogue/demo-catalogue.js";
import { searchTerms } from "../../src/catalogue/search.js";
import { createOfferService } from "../../src/catalogue/service.js";
import { createMatchingService } from "../../src/matching/service.js";
import type { CatalogueOfferInput } from "../../src/model/services.js";
import type { HolderTables } from "../../src/model/tables.js";
import { createTestHolderContext, fakeClock } from "../../src/testing.js";
import { carOffer, flatOffer } from "../support/offer-helpers.js";

// intent_search_offers: full text over the catalogue (SQLite FTS5, PostgreSQL tsvector + GIN),
// kept in sync by the database, ignoring case and accents, newest first.

describe("search terms", () => {
  it("folds case and accents, drops function words, keeps at most 8 distinct terms", () => {
    expect(searchTerms("Chcem ŠKODA Octavia v Košiciach, octavia!")).toEqual([
      "skoda",
      "octavia",
      "kosiciach",
    ]);
    expect(searchTerms("a the in")).toEqual([]);
    expect(searchTerms("one two three four five six seven eight nine ten")).toHaveLength(8);
    expect(searchTerms('"quotes" OR NEAR(x) * -minus')).toEqual(["quotes", "x", "minus"]);
  });
});

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  async function setup() {
    const clock = fakeClock();
    const ctx = await createTestHolderContext(engine.db, clock.now, { reset: true });
    const matching = createMatchingService(ctx);
    const offers = createOfferService(ctx, matching);
    return { clock, ctx, offers };
  }
  const titles = (list: { title: string }[]) => list.map((o) => o.title);

  it("finds offers by title words, attribute values and region names, ignoring case and accents", async () => {
    const { offers } = await setup();
    await offers.importCatalogue([
      carOffer({ title: "Škoda Octavia Combi, 2018", location: { country: "SK", region: "SK-KI" } }),
      carOffer({ title: "Volkswagen Golf, 2020" }, { make: "Volkswagen", model: "Golf", fuel: "petrol" }),
      flatOffer({ title: "Prodej bytu 2+kk, 48 m²", location: { country: "CZ", region: "CZ-10" } }),
      carOffer({ title: "Citroën C4, 2021" }, { make: "Citroën", model: "C4", fuel: "electric" }),
    ]);
    expect(titles(await offers.search("skoda", 10))).toEqual(["Škoda Octavia Combi, 2018"]);
    expect(titles(await offers.search("ŠKODA OCTAVIA", 10))).toEqual(["Škoda Octavia Combi, 2018"]);
    expect(titles(await offers.search("citroen", 10))).toEqual(["Citroën C4, 2021"]);
    expect(titles(await offers.search("electric", 10))).toEqual(["Citroën C4, 2021"]); // attribute value
    expect(titles(await offers.search("octav", 10))).toEqual(["Škoda Octavia Combi, 2018"]); // prefix
    expect(titles(await offers.search("Košice", 10))).toEqual(["Škoda Octavia Combi, 2018"]); // region seat
    expect(titles(await offers.search("praha flat", 10))).toEqual(["Prodej bytu 2+kk, 48 m²"]);
    expect(await offers.search("tesla", 10)).toEqual([]);
  });

  it("every word must match; when no offer has them all, any word matches, the most relevant first", async () => {
    const { offers } = await setup();
    await offers.importCatalogue([
      carOffer({ title: "Škoda Octavia diesel" }),
      carOffer({ title: "Škoda Fabia" }, { model: "Fabia", fuel: "petrol" }),
    ]);
    expect(titles(await offers.search("skoda fabia", 10))).toEqual(["Škoda Fabia"]);
    const any = titles(await offers.search("fabia kodiaq", 10));
    expect(any).toEqual(["Škoda Fabia"]);
  });

  it("returns newest first, honours the limit, and refuses a bad limit or statement precisely", async () => {
    const { offers } = await setup();
    await offers.importCatalogue([
      carOffer({ title: "Octavia old", publishedAt: "2026-10-01T00:00:00Z" }),
      carOffer({ title: "Octavia new", publishedAt: "2026-11-29T00:00:00Z" }),
      carOffer({ title: "Octavia mid", publishedAt: "2026-11-01T00:00:00Z" }),
    ]);
    expect(titles(await offers.search("octavia", 10))).toEqual(["Octavia new", "Octavia mid", "Octavia old"]);
    expect(titles(await offers.search("octavia", 2))).toEqual(["Octavia new", "Octavia mid"]);
    await expect(offers.search("octavia", 0)).rejects.toMatchObject({
      code: "ERR_HOLDER_INVALID",
      message: "limit must be a whole number from 1 to 100 (got 0)",
    });
    await expect(offers.search("   ", 5)).rejects.toMatchObject({ code: "ERR_HOLDER_INVALID" });
    expect(await offers.search("in the", 5)).toEqual([]);
  });

  it("stays in sync with the table: updates re-index, deletes and withdrawals disappear", async () => {
    const { ctx, offers } = await setup();
    const offer = carOffer({ title: "Škoda Superb" }, { model: "Superb" });
    await offers.importCatalogue([offer]);
    expect(await offers.search("superb", 5)).toHaveLength(1);
    await offers.importCatalogue([{ ...offer, title: "Škoda Kodiaq" }]);
    expect(await offers.search("kodiaq", 5)).toHaveLength(1);
    // The old title is gone, but the attribute value "Superb" still stands.
    await offers.importCatalogue([
      { ...offer, title: "Škoda Kodiaq", attributes: { make: "Škoda", model: "Kodiaq" } },
    ]);
    expect(await offers.search("superb", 5)).toHaveLength(0);
    await ctx.store.db.updateTable("holder_offers").set({ withdrawn_at: ctx.clock() }).execute();
    expect(await offers.search("kodiaq", 5)).toHaveLength(0);
    await ctx.store.db.updateTable("holder_offers").set({ withdrawn_at: null }).execute();
    expect(await offers.search("kodiaq", 5)).toHaveLength(1);
    await ctx.store.db.deleteFrom("holder_offers").execute();
    expect(await offers.search("kodiaq", 5)).toHaveLength(0);
    // Written by anyone (not through the service): still indexed by the database.
    await ctx.store.db
      .insertInto("holder_offers")
      .values({
        id: "off_direct",
        source_kind: "catalogue",
        source_ref: "direct-1",
        seller: null,
        in_reply_to: null,
        title: "Dacia Duster LPG",
        description: null,
        category: "vehicles",
        price_amount: 9_000,
        price_currency: "EUR",
        country: "SK",
        region: null,
        url: null,
        attributes_json: "{}",
        published_at: ctx.clock(),
        created_at: ctx.clock(),
        withdrawn_at: null,
        matched_at: ctx.clock(),
        match_seq: 1,
      })
      .execute();
    expect(titles(await offers.search("duster", 5))).toEqual(["Dacia Duster LPG"]);
  });

  it("searches the demo catalogue: a make in Czech and Slovak listings, flats by town", async () => {
    const { offers } = await setup();
    const demo = demoCatalogue({ count: 600 });
    await offers.importCatalogue(demo);
    const skoda = await offers.search("skoda", 100);
    expect(skoda.length).toBeGreaterThan(10);
    for (const offer of skoda) expect(offer.attributes.make).toBe("Škoda");
    const brno = await offers.search("Brno", 100);
    expect(brno.length).toBeGreaterThan(0);
    for (const offer of brno) expect(offer.location.region).toBe("CZ-64");
    for (let i = 1; i < skoda.length; i++) {
      expect(Date.parse((skoda[i - 1] as CatalogueOfferInput).publishedAt ?? "")).toBeGreaterThanOrEqual(
        Date.parse((skoda[i] as CatalogueOfferInput).publishedAt ?? ""),
      );
    }
  });

  it("migration 2 indexes the offers that were stored before it", async () => {
    const fresh = await engine.createDatabase();
    const first = holderMigrations.migrations[0];
    if (!first) throw new Error("holder migration 1");
    const onlyCore: PackageMigrations = { package: "holder", migrations: [first] };
    await migrate(fresh.db, [onlyCore]);
    const db = fresh.db as unknown as import("@doorbell/store").Database<HolderTables>;
    await db.db
      .insertInto("holder_offers")
      .values({
        id: "off_before",
        source_kind: "catalogue",
        source_ref: "before-1",
        seller: null,
        in_reply_to: null,
        title: "Hyundai Tucson Hybrid",
        description: "Servisní knížka",
        category: "vehicles",
        price_amount: 600_000,
        price_currency: "CZK",
        country: "CZ",
        region: "CZ-80",
        url: null,
        attributes_json: JSON.stringify({ make: "Hyundai" }),
        published_at: 1,
        created_at: 1,
        withdrawn_at: null,
      } as never) // the shape of migration 1: matched_at and match_seq came with migration 3
      .execute();
    const ctx = await createTestHolderContext(fresh.db, fakeClock().now);
    const offers = createOfferService(ctx, createMatchingService(ctx));
    expect(titles(await offers.search("tucson", 5))).toEqual(["Hyundai Tucson Hybrid"]);
    expect(titles(await offers.search("ostrava knizka", 5))).toEqual(["Hyundai Tucson Hybrid"]);
  });
});
