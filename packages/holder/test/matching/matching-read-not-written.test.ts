import { type Database, migrate, type PackageMigrations } from "@doorbell/store";
import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { holderMigrations } from "../../src/app/migrations.js";
import { createOfferService } from "../../src/catalogue/service.js";
import { readMatches } from "../../src/matching/reader.js";
import { createMatchingService } from "../../src/matching/service.js";
import { createTestHolderContext, fakeClock } from "../../src/testing.js";
import { carOffer, insertIntent, matchesOf, setIntentStatus } from "../support/offer-helpers.js";

// Matches are read, not written (docs/decisions.md): an intent's matches are the offers that fit it
// by the rule, each delivered when it entered matching or when the intent's criteria took effect.
// These tests pin what follows from that: a changed offer, changed criteria, a withdrawal in the
// same millisecond as an offer, and the upgrade from stored matches.

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  async function setup() {
    const clock = fakeClock();
    const ctx = await createTestHolderContext(engine.db, clock.now, { reset: true });
    const notified: string[][] = [];
    const matching = createMatchingService(ctx, { onMatched: (ids) => void notified.push([...ids]) });
    const offers = createOfferService(ctx, matching);
    return { clock, ctx, matching, offers, notified };
  }

  it("a changed offer is delivered again at its new time where it fits, and no longer where it does not", async () => {
    const { clock, ctx, matching, offers } = await setup();
    const modest = await insertIntent(ctx, {
      criteria: { category: "vehicles" },
      budget_amount: 15_000,
      budget_currency: "EUR",
    });
    const wealthy = await insertIntent(ctx, {
      criteria: { category: "vehicles" },
      budget_amount: 50_000,
      budget_currency: "EUR",
    });
    await matching.start();
    const offer = carOffer({ price: { amount: 14_900, currency: "EUR" } });
    await offers.importCatalogue([offer]);
    const first = clock.now();
    clock.advance(60_000);
    await offers.importCatalogue([{ ...offer, price: { amount: 16_500, currency: "EUR" } }]);
    expect(await matchesOf(ctx, modest)).toEqual([]);
    const [again] = await matchesOf(ctx, wealthy);
    expect(again?.delivered_at).toBe(first + 60_000);
    // The same offer id: an agent that keeps offers by id updates the one it has.
    expect((await matching.listMatches({ kind: "intent-code", intentId: wealthy })).matches).toHaveLength(1);
  });

  it("new criteria deliver the offers that fit them at the change, announced; other changes announce nothing", async () => {
    const { clock, ctx, matching, offers, notified } = await setup();
    const id = await insertIntent(ctx, { criteria: { category: "vehicles", make: "Kia" } });
    await matching.start();
    await offers.importCatalogue([carOffer()]); // a Škoda: not for this intent yet
    expect(await matchesOf(ctx, id)).toEqual([]);
    clock.advance(60_000);
    const changedAt = clock.now();
    await ctx.store.db
      .updateTable("holder_intents")
      .set({
        criteria_json: JSON.stringify({ category: "vehicles", make: "Škoda" }),
        matching_since: changedAt,
        updated_at: changedAt,
      })
      .where("id", "=", id)
      .execute();
    notified.length = 0;
    expect(await matching.onActivated(id)).toEqual({ matched: 1 });
    expect(notified).toEqual([[id]]);
    expect(await matchesOf(ctx, id)).toEqual([expect.objectContaining({ delivered_at: changedAt })]);
    // A later change of the statement only: nothing new to announce.
    clock.advance(1);
    await ctx.store.db
      .updateTable("holder_intents")
      .set({ statement: "a Škoda, any model", updated_at: clock.now() })
      .where("id", "=", id)
      .execute();
    expect(await matching.onActivated(id)).toEqual({ matched: 0 });
  });

  it("an offer entering matching after a withdrawal never reaches it, even in the same millisecond", async () => {
    const { ctx, matching, offers } = await setup();
    const id = await insertIntent(ctx, { criteria: { category: "vehicles" } });
    await matching.start();
    await offers.importCatalogue([carOffer({ title: "before" })]);
    await setIntentStatus(ctx, id, "withdrawn"); // the clock has not moved
    await offers.importCatalogue([carOffer({ title: "after" })]);
    const read = await matching.listMatches({ kind: "intent-code", intentId: id });
    expect(read.matches.map((m) => m.offer.title)).toEqual(["before"]);
  });

  it("an import tells each intent once, however many of its offers and batches fit it", async () => {
    const { ctx, matching, notified } = await setup();
    const a = await insertIntent(ctx, { criteria: { category: "vehicles" } });
    const b = await insertIntent(ctx, { criteria: { category: "vehicles", make: "Škoda" } });
    await matching.start();
    const offers = createOfferService(ctx, matching, { batchSize: 1 });
    const result = await offers.importCatalogue([carOffer(), carOffer(), carOffer()]);
    expect(result.matched).toBe(6);
    expect(notified.map((ids) => [...ids].sort())).toEqual([[a, b].sort()]);
    // A new import is a new round: told again.
    await offers.importCatalogue([carOffer()]);
    expect(notified).toHaveLength(2);
  });

  it("a read that looked at many offers leaves a note, so the next one skips them and still finds what is new", async () => {
    const { clock, ctx, matching, offers } = await setup();
    const id = await insertIntent(ctx, { criteria: { category: "vehicles", make: "Kia" } });
    await matching.start();
    clock.advance(1);
    await offers.importCatalogue(Array.from({ length: 100 }, () => carOffer())); // Škodas: not for it
    const since = { at: clock.now() - 1, id: Number.POSITIVE_INFINITY };
    let candidates = 0;
    const counting = async (query: Parameters<typeof ctx.store.read>[0]) => {
      const rows = await ctx.store.read(query);
      candidates = rows.length;
      return rows;
    };
    expect(await readMatches(ctx.store.db, id, since, counting)).toEqual([]);
    expect(candidates).toBe(100);
    expect(await readMatches(ctx.store.db, id, since, counting)).toEqual([]);
    expect(candidates).toBe(0); // the note: nothing between `since` and the last arrival fits
    clock.advance(1);
    await offers.importCatalogue([
      carOffer({ title: "Kia Ceed" }, { make: "Kia", model: "Ceed" }),
      carOffer(),
    ]);
    const next = await readMatches(ctx.store.db, id, since, counting);
    expect(next.map((m) => m.offer.title)).toEqual(["Kia Ceed"]);
    expect(candidates).toBe(2);
    // New criteria void the note: the Škodas are read again, and now fit.
    clock.advance(1);
    await ctx.store.db
      .updateTable("holder_intents")
      .set({ criteria_json: JSON.stringify({ category: "vehicles" }), matching_since: clock.now() })
      .where("id", "=", id)
      .execute();
    expect(await readMatches(ctx.store.db, id, since, counting)).toHaveLength(102);
  });

  it("upgrading from stored matches (migration 3) mails nothing again and orders offers by arrival", async () => {
    const fresh = await engine.createDatabase();
    const before: PackageMigrations = {
      package: "holder",
      migrations: holderMigrations.migrations.slice(0, 2),
    };
    await migrate(fresh.db, [before]);
    // Migration 2's shape (holder_matches still there): written untyped.
    const raw = (fresh.db as unknown as Database<Record<string, Record<string, unknown>>>).db;
    const intent = {
      id: "int_old",
      code_hash: "h",
      status: "active",
      statement: "an Octavia",
      criteria_json: JSON.stringify({ category: "vehicles" }),
      category: "vehicles",
      country: "SK",
      valid_until: 4_000_000_000_000,
      visibility: "private",
      created_at: 1_000,
      updated_at: 1_000,
      confirmed_at: 1_000,
    };
    await raw.insertInto("holder_intents").values(intent).execute();
    for (const [id, createdAt] of [
      ["off_b", 3_000],
      ["off_a", 2_000],
    ] as const) {
      await raw
        .insertInto("holder_offers")
        .values({
          id,
          source_kind: "catalogue",
          source_ref: id,
          title: "Škoda Octavia",
          category: "vehicles",
          price_amount: 10_000,
          price_currency: "EUR",
          country: "SK",
          attributes_json: "{}",
          published_at: 1_000,
          created_at: createdAt,
        })
        .execute();
      await raw
        .insertInto("holder_matches")
        .values({ intent_id: "int_old", offer_id: id, delivered_at: createdAt, mailed_at: createdAt })
        .execute();
    }
    await migrate(fresh.db, [holderMigrations]);
    const ctx = await createTestHolderContext(fresh.db, () => 10_000);
    const seqs = await ctx.store.db
      .selectFrom("holder_offers")
      .select(["id", "match_seq"])
      .orderBy("match_seq")
      .execute();
    expect(seqs.map((row) => row.id)).toEqual(["off_a", "off_b"]);
    expect((await matchesOf(ctx, "int_old")).map((m) => m.offer_id)).toEqual(["off_a", "off_b"]);
    const upgraded = await ctx.store.db
      .selectFrom("holder_intents")
      .select(["matching_since", "mailed_at", "mailed_seq"])
      .executeTakeFirstOrThrow();
    expect(Number(upgraded.matching_since)).toBe(1_000);
    expect(Number(upgraded.mailed_seq)).toBe(2); // every offer there counts as mailed
    expect(Number(upgraded.mailed_at)).toBeGreaterThanOrEqual(3_000);
  });
});
