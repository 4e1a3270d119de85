import type { Kysely } from "@doorbell/store";
import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOfferService } from "../../src/catalogue/service.js";
import type { HolderContext } from "../../src/context.js";
import { readStatement } from "../../src/matching/reader.js";
import { createMatchingService, LIST_MATCHES_MAX } from "../../src/matching/service.js";
import type { HolderTables } from "../../src/model/tables.js";
import { createTestHolderContext, fakeClock, MINUTE } from "../../src/testing.js";
import { carOffer, insertIntent } from "../support/offer-helpers.js";

// intent_list_matches: the offers delivered for the principal's own intent, oldest first, strictly
// after `since`; the empty answer is one indexed statement.

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  async function setup() {
    const clock = fakeClock();
    const ctx = await createTestHolderContext(engine.db, clock.now, { reset: true });
    const matching = createMatchingService(ctx);
    const offers = createOfferService(ctx, matching);
    const id = await insertIntent(ctx, { criteria: { category: "vehicles" } });
    await matching.start();
    return { clock, ctx, matching, offers, id, me: { kind: "intent-code" as const, intentId: id } };
  }

  it("answers oldest first, strictly after since, with deliveredAt to pass back as since", async () => {
    const { clock, offers, matching, me } = await setup();
    const t1 = clock.now();
    await offers.importCatalogue([carOffer({ title: "first" })]);
    clock.advance(MINUTE);
    await offers.importCatalogue([carOffer({ title: "second" }), carOffer({ title: "third" })]);
    clock.advance(MINUTE);
    await offers.importCatalogue([carOffer({ title: "fourth" })]);

    const all = await matching.listMatches(me);
    expect(all.matches.map((m) => m.offer.title)).toEqual(["first", "second", "third", "fourth"]);
    expect(all.matches[0]?.deliveredAt).toBe(new Date(t1).toISOString());
    expect(all.more).toBeUndefined();

    const afterFirst = await matching.listMatches(me, undefined, all.matches[0]?.deliveredAt);
    expect(afterFirst.matches.map((m) => m.offer.title)).toEqual(["second", "third", "fourth"]);
    const afterThird = await matching.listMatches(me, me.intentId, all.matches[2]?.deliveredAt);
    expect(afterThird.matches.map((m) => m.offer.title)).toEqual(["fourth"]);
    // One millisecond before a delivery includes it; any offset notation works.
    const justBefore = new Date(t1 + MINUTE - 1).toISOString();
    expect((await matching.listMatches(me, undefined, justBefore)).matches).toHaveLength(3);
    const offsetForm = new Date(t1 + 2 * MINUTE).toISOString().replace("Z", "+00:00");
    expect((await matching.listMatches(me, undefined, offsetForm)).matches).toEqual([]);
    expect((await matching.listMatches(me, undefined, "2099-01-01T00:00:00Z")).matches).toEqual([]);
  });

  it("refuses a since that is not an ISO date-time", async () => {
    const { matching, me } = await setup();
    for (const since of ["yesterday", "2026-11-30", "1700000000000", "2026-13-01T00:00:00Z"]) {
      await expect(matching.listMatches(me, undefined, since)).rejects.toMatchObject({
        code: "ERR_HOLDER_INVALID",
      });
    }
  });

  it("an intentCode reads its own intent only; OAuth principals wait for the OAuth issue", async () => {
    const { ctx, offers, matching, me } = await setup();
    const other = await insertIntent(ctx, { criteria: { category: "vehicles" } });
    await matching.onActivated(other);
    await offers.importCatalogue([carOffer()]);
    await expect(matching.listMatches(me, other)).rejects.toMatchObject({ code: "ERR_HOLDER_FORBIDDEN" });
    // Refused the same way whether or not the other id exists.
    await expect(matching.listMatches(me, "int_nope")).rejects.toMatchObject({
      code: "ERR_HOLDER_FORBIDDEN",
    });
    await expect(
      matching.listMatches({ kind: "oauth", subject: "s", clientId: "c" }, me.intentId),
    ).rejects.toMatchObject({ code: "ERR_HOLDER_FORBIDDEN" });
    expect((await matching.listMatches({ kind: "intent-code", intentId: other })).matches).toHaveLength(1);
  });

  it("the empty answer is one statement (on the holder_offers_arrivals index)", async () => {
    const { ctx, me } = await setup();
    let queries = 0;
    // Counted as results come back (the list query is compiled once, so it never passes through
    // transformQuery again) and as compiled reads (`store.read`, the hot path past Kysely).
    const counted: Kysely<HolderTables> = ctx.store.db.withPlugin({
      transformQuery: (args) => args.node,
      transformResult: async (args) => {
        queries++;
        return args.result;
      },
    });
    const counting: HolderContext = {
      ...ctx,
      store: {
        ...ctx.store,
        db: counted,
        read: (query) => {
          queries++;
          return ctx.store.read(query);
        },
      },
    };
    const matching = createMatchingService(counting);
    expect(await matching.listMatches(me, undefined, new Date(ctx.clock()).toISOString())).toEqual({
      matches: [],
    });
    expect(queries).toBe(1);
    if (engine.dialect === "sqlite") {
      const statement = readStatement(ctx.store.db);
      const plan = await ctx.store.db.executeQuery<{ detail: string }>({
        ...statement,
        sql: `explain query plan ${statement.sql}`,
        parameters: statement.parameters.map((value) => (typeof value === "string" ? me.intentId : 1)),
      });
      const details = plan.rows.map((r) => r.detail).join("\n");
      // The intent by its key, then offers on a range of (category, country[, region], matched_at).
      expect(details).toMatch(/holder_offers_arrivals \(category=\? AND country=\? AND matched_at>\?\)/);
      expect(details).toMatch(
        /holder_offers_region_arrivals \(category=\? AND country=\? AND region=\? AND matched_at>\?\)/,
      );
      expect(details).not.toMatch(/SCAN o\b/);
    }
  });

  it("a long list comes in pages that never split matches sharing a deliveredAt", async () => {
    const { clock, ctx, matching, me } = await setup();
    const offers = Array.from({ length: LIST_MATCHES_MAX + 5 }, (_, i) =>
      carOffer({ title: `same ms ${i}` }),
    );
    const service = createOfferService(ctx, matching, { batchSize: 2_000 });
    await service.importCatalogue(offers); // one transaction: every match at the same millisecond
    clock.advance(1);
    await service.importCatalogue([carOffer({ title: "later" })]);

    const first = await matching.listMatches(me);
    expect(first.matches).toHaveLength(LIST_MATCHES_MAX + 5);
    expect(first.more).toBe(true);
    const second = await matching.listMatches(me, undefined, first.matches.at(-1)?.deliveredAt);
    expect(second.matches.map((m) => m.offer.title)).toEqual(["later"]);
    expect(second.more).toBeUndefined();
  });
});
