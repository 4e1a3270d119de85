/**
 * Issue 16 item 5: one search cannot stall everyone. On a SQLite file the search runs on its own
 * thread and read-only connection (the event loop only waits for the answer), each word's prefix
 * stands for a bounded number of indexed words, and a flood beyond the thread's queue is refused
 * with a clear error instead of piling up. (The latency goal is measured by
 * `npm run bench -- search-stall`, never asserted here.)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Database, openDatabase } from "@doorbell/store";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SEARCH_COST, searchOffers } from "../../src/catalogue/search.js";
import { SEARCH_QUEUE_MAX } from "../../src/catalogue/search-thread.js";
import { createOfferService } from "../../src/catalogue/service.js";
import { createMatchingService } from "../../src/matching/service.js";
import { createTestHolderContext, type TestHolderContext } from "../../src/testing.js";

describe("catalogue search on a SQLite file", () => {
  let dir: string;
  let db: Database;
  let ctx: TestHolderContext;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "search-thread-"));
    db = await openDatabase(`sqlite:${join(dir, "holder.sqlite")}`);
    ctx = await createTestHolderContext(db);
    const offers = createOfferService(ctx, createMatchingService(ctx));
    // 40 listings whose prices all start with 1: "1" as a prefix stands for 40 indexed words.
    await offers.importCatalogue(
      Array.from({ length: 40 }, (_, i) => ({
        source: { kind: "catalogue" as const, ref: `S-${i}` },
        title: `Škoda Octavia ${i}`,
        description: `cena ${1000 + i * 7}`,
        category: "vehicles" as const,
        price: { amount: 10_000 + i, currency: "EUR" as const },
        location: { country: "SK" as const, region: "SK-BL" },
        attributes: { make: "Škoda", model: "Octavia" },
      })),
    );
  });
  afterAll(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("answers from the search thread, with prefixes and the any-word fallback", async () => {
    expect((await searchOffers(ctx.store, "octav", 100)).length).toBe(40);
    const some = await searchOffers(ctx.store, "octavia nonexistentword", 5);
    expect(some).toHaveLength(5); // no offer has both: any of them, ranked
    expect(await searchOffers(ctx.store, "nonexistentword", 5)).toEqual([]);
  });

  it("bounds a short prefix to a few indexed words instead of every word it starts", async () => {
    // "1" would stand for the 40 distinct "1…" prices; it stands for at most SEARCH_COST.prefixWords.
    const found = await searchOffers(ctx.store, "1", 100);
    expect(found.length).toBeGreaterThan(0);
    expect(found.length).toBeLessThanOrEqual(SEARCH_COST.prefixWords);
  });

  it("refuses a flood beyond its queue with a clear error; the rest are answered", async () => {
    const results = await Promise.allSettled(
      Array.from({ length: SEARCH_QUEUE_MAX + 20 }, () => searchOffers(ctx.store, "1 2 3 4 5 6 7 8", 20)),
    );
    const refused = results.filter((r) => r.status === "rejected");
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) {
      expect((r as PromiseRejectedResult).reason).toMatchObject({ code: "ERR_HOLDER_UNAVAILABLE" });
    }
    expect(results.filter((r) => r.status === "fulfilled").length).toBeGreaterThanOrEqual(SEARCH_QUEUE_MAX);
    // Afterwards the thread answers as before.
    expect((await searchOffers(ctx.store, "octavia", 3)).length).toBe(3);
  });
});
