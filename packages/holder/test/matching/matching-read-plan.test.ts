// Issue 14 (the soak): a pull must cost what arrived since it last read, not what the catalogue
// holds. On PostgreSQL the match read was planned as a hash join over every offer of the intent's
// category and country, so the pull rate fell as offers accumulated (200/s → 145/s in ten soak
// minutes). This pins the plan on both engines: the offers are searched through an index, never
// scanned whole, with thousands of offers of one category and country in the table.
import { sql } from "@doorbell/store";
import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOfferService } from "../../src/catalogue/service.js";
import { boundRead } from "../../src/matching/reader.js";
import { createMatchingService } from "../../src/matching/service.js";
import { createTestHolderContext, fakeClock } from "../../src/testing.js";
import { carOffer, insertIntent } from "../support/offer-helpers.js";

const OFFERS = 3_000;

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  it(`reads an intent's new matches through an index with ${OFFERS.toLocaleString("en-US")} offers of its category and country`, async () => {
    const clock = fakeClock();
    const ctx = await createTestHolderContext(engine.db, clock.now, { reset: true });
    const matching = createMatchingService(ctx);
    const offers = createOfferService(ctx, matching);
    const intentId = await insertIntent(ctx, {
      criteria: { category: "vehicles", make: "skoda" },
      budget_amount: 15_000,
      budget_currency: "EUR",
    });
    await matching.start();
    const batch = Array.from({ length: OFFERS }, (_, i) => carOffer({}, { year: 2000 + (i % 20) }));
    for (let i = 0; i < OFFERS; i += 500) {
      clock.advance(1_000);
      await offers.importCatalogue(batch.slice(i, i + 500));
    }
    const { db } = ctx.store;
    if (engine.dialect === "postgres") await sql`analyze holder_offers`.execute(db);
    else await sql`analyze`.execute(db);

    // A pull that has read up to a minute ago: `from` is recent, the intent's note not written.
    const since = clock.now() - 60_000;
    const statement = boundRead(db, intentId, { at: since, id: Number.POSITIVE_INFINITY });
    const explain = engine.dialect === "postgres" ? "explain " : "explain query plan ";
    const { rows } = await db.executeQuery<Record<string, unknown>>({
      ...statement,
      sql: `${explain}${statement.sql}`,
    });
    const plan = rows.map((row) => String(row["QUERY PLAN"] ?? row.detail)).join("\n");
    if (engine.dialect === "postgres") {
      expect(plan).not.toMatch(/Seq Scan on holder_offers o\b/);
      expect(plan).toMatch(
        /(Bitmap Index Scan on|Index (Only )?Scan using) holder_offers_(region_)?arrivals/,
      );
      expect(plan).toMatch(/Index Cond: .*matched_at >= CASE/);
    } else {
      expect(plan).not.toMatch(/SCAN o\b(?! USING)/);
      expect(plan).toMatch(/SEARCH o USING INDEX holder_offers_(region_)?arrivals .*matched_at>\?/);
    }
  }, 120_000);
});
