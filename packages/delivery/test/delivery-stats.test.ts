// The operator's chart reads delivery_stats: each process counts its attempts in memory and adds
// them to the 5-minute bucket's row when it flushes. Two engines on their own handles to one
// database (two processes) deliver into the same bucket; the row holds the sum of both, and the
// failures and attempt times too. Buckets past 30 days are pruned by a flush.

import type { Database } from "@doorbell/store";
import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DeliveryTables, readStats, STATS_BUCKET_MS, STATS_KEPT_MS } from "../src/index.js";
import { activeSubscription, DAY, endpointForSuite, engineOn, fakeClock, HOUR } from "./harness.js";

const MCP = { channel: "mcp", subscriberId: "5d1e0b7c-3a4f-4e21-9c8b-7f6a5e4d3c2b" } as const;

forEachEngine({ describe, beforeAll, afterAll }, (fixture) => {
  const endpoint = endpointForSuite();

  it("two processes add their successes, failures and times into the same bucket's row", async () => {
    const database = await fixture.createDatabase();
    const clock = fakeClock();
    // The bucket of T0 + 1 minute: every attempt below is counted in it.
    clock.advance(60_000);
    const first = await engineOn(database.db, clock.now);
    // The second process: its own handle on the same database, the same seal keys.
    const otherHandle = await database.connect();
    const { engine: second, store: secondStore } = await engineOn(otherHandle, clock.now);
    const a = await activeSubscription(first.engine, first.db, clock, endpoint.url, MCP);
    const b = await activeSubscription(second, secondStore.db, clock, endpoint.url, MCP);
    const send = async (engine: typeof second, db: Database<DeliveryTables>, id: string, n: number) => {
      for (let i = 0; i < n; i++) {
        await db.transaction((trx) =>
          engine.enqueue(trx, id, { type: "incident.created", eventId: `evt_${id}_${i}`, data: { i } }),
        );
      }
    };
    await send(first.engine, first.store, a.id, 3);
    await first.engine.runDue();
    await send(second, secondStore, b.id, 4);
    await second.runDue();
    // One refused attempt in the second process.
    endpoint.control.script = [503];
    await send(second, secondStore, b.id, 1);
    await second.runDue();

    // Each runDue leaves its figures in the table (a worker adds its own every few seconds).

    const rows = await first.db.selectFrom("delivery_stats").selectAll().execute();
    expect(rows).toHaveLength(1);
    const row = rows[0] as NonNullable<(typeof rows)[number]>;
    expect(Number(row.bucket_start) % STATS_BUCKET_MS).toBe(0);
    expect(Number(row.bucket_start)).toBeLessThanOrEqual(clock.now());
    expect(row.channel).toBe("mcp");
    expect({ successes: Number(row.successes), failures: Number(row.failures) }).toEqual({
      successes: 7,
      failures: 1,
    });
    expect(Number(row.within_5s)).toBe(8);
    expect(Number(row.latency_ms_max)).toBeGreaterThanOrEqual(0);
    expect(Number(row.latency_ms_sum)).toBeGreaterThanOrEqual(Number(row.latency_ms_max));

    // A later flush of the same bucket adds to it again.
    await send(first.engine, first.store, a.id, 2);
    await first.engine.runDue();
    await first.engine.flushStats();
    const all = await readStats(first.db, { from: clock.now() - HOUR, to: clock.now() + 1, binMs: HOUR });
    expect(all.reduce((sum, each) => sum + each.successes, 0)).toBe(9);
    expect(all.reduce((sum, each) => sum + each.failures, 0)).toBe(1);
    // Read back in hour bins: the bins cover the range, the oldest first, empty ones as zeros.
    expect(all.map((each) => each.start)).toEqual([
      clock.now() - (clock.now() % HOUR) - HOUR,
      clock.now() - (clock.now() % HOUR),
    ]);
    expect(all[1]).toMatchObject({ successes: 9, failures: 1 });
    expect(all[0]).toMatchObject({ successes: 0, failures: 0, meanMs: null });
  });

  it("a flush deletes buckets older than 30 days", async () => {
    const database = await fixture.createDatabase();
    const clock = fakeClock();
    const { engine, db, store } = await engineOn(database.db, clock.now);
    const sub = await activeSubscription(engine, db, clock, endpoint.url, MCP);
    await store.transaction((trx) =>
      engine.enqueue(trx, sub.id, { type: "incident.created", eventId: "evt_old", data: {} }),
    );
    await engine.runDue();
    await engine.flushStats();
    expect(await db.selectFrom("delivery_stats").select("bucket_start").execute()).toHaveLength(1);

    // A fresh engine (a process started later) prunes at its first flush.
    clock.advance(STATS_KEPT_MS + DAY);
    const later = await engineOn(database.db, clock.now);
    const fresh = await activeSubscription(later.engine, later.db, clock, endpoint.url, MCP);
    await later.store.transaction((trx) =>
      later.engine.enqueue(trx, fresh.id, { type: "incident.created", eventId: "evt_new", data: {} }),
    );
    await later.engine.runDue();
    await later.engine.flushStats();
    const left = await db.selectFrom("delivery_stats").select("bucket_start").execute();
    expect(left.map((row) => Number(row.bucket_start))).toEqual([
      clock.now() - (clock.now() % STATS_BUCKET_MS),
    ]);
  });
});
