// A busy limit (MCP tool calls: hundreds a minute) costs no database write per call: a key's first
// call in a window is counted in the database at once, its further calls in memory and written
// together every flush. Two processes on one database still share one count: each flush reads
// the other's calls back, and nothing counted is lost (close writes what is pending).
import { createHmac } from "node:crypto";
import { migrate } from "@doorbell/store";
import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  BATCHED_FROM_POINTS,
  createBatchedCounts,
  type StoredWindow,
} from "../../src/limits/batched-counts.js";
import { createSharedLimiter, limitsMigrations } from "../../src/limits/index.js";

const hmac = (key: string) => createHmac("sha256", "test-limits-key").update(key).digest("base64url");
const rules = {
  "mcp.tool": { points: 200, durationSeconds: 60 },
  "mail.client": { points: 3, durationSeconds: 3600 },
};

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  const storedPoints = async (): Promise<number> => {
    const rows = await engine.db.db
      .withTables<{ holder_rate_limits: { key: string; points: number } }>()
      .selectFrom("holder_rate_limits")
      .select(["key", "points"])
      .where("key", "like", "mcp.tool:%")
      .execute();
    return rows.reduce((sum, row) => sum + Number(row.points), 0);
  };

  it("counts a busy key's calls in memory between writes, and two processes still share one count", async () => {
    expect(rules["mcp.tool"].points).toBeGreaterThanOrEqual(BATCHED_FROM_POINTS);
    await migrate(engine.db, [limitsMigrations]);
    const other = await engine.connect();
    const now = 1_800_000_000_000;
    const clock = () => now;
    // Flushes only when asked (close), so what is written when is seen exactly.
    const options = { rules, clock, hashKey: hmac, purgeEveryMs: 0, flushEveryMs: 3_600_000 };
    const a = createSharedLimiter({ store: engine.db, ...options });
    const b = createSharedLimiter({ store: other, ...options });
    try {
      // The first call of a window is written at once; the next 149 only in memory.
      for (let i = 0; i < 150; i++) expect((await a.consume("mcp.tool", "192.0.2.1")).ok).toBe(true);
      expect(await storedPoints()).toBe(1);
      await a.close();
      expect(await storedPoints()).toBe(150);

      // Another process learns the shared count with its first call and stops at the limit.
      let admitted = 0;
      for (let i = 0; i < 60; i++) if ((await b.consume("mcp.tool", "192.0.2.1")).ok) admitted++;
      expect(admitted).toBe(50);
      expect(await b.consume("mcp.tool", "192.0.2.1")).toEqual({ ok: false, retryAfterSeconds: 60 });
      await b.close();
      // Every admitted call is in the shared row; refused ones after the first are never written.
      expect(await storedPoints()).toBeGreaterThanOrEqual(200);

      // A limit of a few calls an hour is written on every call, never held in memory.
      const c = createSharedLimiter({ store: engine.db, ...options });
      for (let i = 0; i < 3; i++) expect((await c.consume("mail.client", "192.0.2.9")).ok).toBe(true);
      const d = createSharedLimiter({ store: other, ...options });
      expect((await d.consume("mail.client", "192.0.2.9")).ok).toBe(false);
      await Promise.all([c.close(), d.close()]);
    } finally {
      await other.close();
    }
  });

  it("writes pending counts by itself every flush interval, and windows still end on time", async () => {
    await migrate(engine.db, [limitsMigrations]);
    let now = 1_900_000_000_000;
    const clock = () => now;
    const limiter = createSharedLimiter({
      store: engine.db,
      rules,
      clock,
      hashKey: hmac,
      purgeEveryMs: 0,
      flushEveryMs: 5,
    });
    try {
      const before = await storedPoints();
      for (let i = 0; i < 200; i++) await limiter.consume("mcp.tool", "198.51.100.4");
      expect(await limiter.consume("mcp.tool", "198.51.100.4")).toEqual({ ok: false, retryAfterSeconds: 60 });
      // The flush timer writes the 199 held in memory without being asked.
      await expect.poll(storedPoints, { interval: 10 }).toBe(before + 200);
      now += 60_000;
      expect(await limiter.consume("mcp.tool", "198.51.100.4")).toEqual({ ok: true, remaining: 199 });
    } finally {
      await limiter.close();
    }
  });
  it("counts a window's calls in that window only: those held when it ends are not added to the next", async () => {
    await migrate(engine.db, [limitsMigrations]);
    let now = 2_000_000_000_000;
    const limiter = createSharedLimiter({
      store: engine.db,
      rules,
      clock: () => now,
      hashKey: hmac,
      purgeEveryMs: 0,
      flushEveryMs: 3_600_000,
    });
    try {
      const before = await storedPoints();
      // One call written, nine held in memory; then the window ends before any flush.
      for (let i = 0; i < 10; i++) expect((await limiter.consume("mcp.tool", "203.0.113.7")).ok).toBe(true);
      now += 61_000;
      expect(await limiter.consume("mcp.tool", "203.0.113.7")).toEqual({ ok: true, remaining: 199 });
      await limiter.close();
      // The new window holds its one call, not the ended window's nine.
      expect((await storedPoints()) - before).toBe(1);
    } finally {
      await limiter.close();
    }
  });

  // Several processes share one PostgreSQL database; SQLite serves one process, so it has no such test.
  if (engine.dialect === "postgres")
    it("two processes flush the same keys, learned in opposite orders, without a deadlock", async () => {
      await migrate(engine.db, [limitsMigrations]);
      const other = await engine.connect();
      const errors: Error[] = [];
      const now = 2_000_000_000_000;
      const options = {
        rules,
        clock: () => now,
        hashKey: hmac,
        purgeEveryMs: 0,
        flushEveryMs: 3_600_000,
        onError: (error: Error) => errors.push(error),
      };
      const a = createSharedLimiter({ store: engine.db, ...options });
      const b = createSharedLimiter({ store: other, ...options });
      const clients = Array.from({ length: 40 }, (_, i) => `198.51.100.${i + 1}`);
      const pointsOfClients = async () => {
        const rows = await engine.db.db
          .withTables<{ holder_rate_limits: { key: string; points: number } }>()
          .selectFrom("holder_rate_limits")
          .select("points")
          .where(
            "key",
            "in",
            clients.map((client) => `mcp.tool:${hmac(client)}`),
          )
          .execute();
        return rows.reduce((sum, row) => sum + Number(row.points), 0);
      };
      try {
        // Each process's first call per key is counted at once and orders its keys; then 3 more each.
        for (const client of clients) await a.consume("mcp.tool", client);
        for (const client of [...clients].reverse()) await b.consume("mcp.tool", client);
        for (let round = 0; round < 3; round++) {
          for (const client of clients) {
            await a.consume("mcp.tool", client);
            await b.consume("mcp.tool", client);
          }
        }
        // Both flush at once, each a transaction over all 40 rows.
        await Promise.all([a.close(), b.close()]);
        expect(errors.map((error) => error.message)).toEqual([]);
        expect(await pointsOfClients()).toBe(clients.length * 8);
      } finally {
        await other.close();
      }
    });

  it("close writes the calls counted while a flush was in flight, not only those that flush took", async () => {
    await migrate(engine.db, [limitsMigrations]);
    const written: number[] = [];
    let openDoor: () => void = () => {};
    const door = new Promise<void>((resolve) => {
      openDoor = resolve;
    });
    let gated = true;
    const counts = createBatchedCounts({
      now: () => 2_100_000_000_000,
      flushEveryMs: 3_600_000,
      // The points are noted once the write may go on (the first write waits at the door).
      addAllPoints: async (pending) => {
        if (gated) {
          gated = false;
          await door;
        }
        const totals = new Map<string, StoredWindow>();
        for (const { rlKey, points } of pending) {
          written.push(points);
          totals.set(rlKey, { points: written.reduce((sum, n) => sum + n, 1), expire: 2_100_000_060_000 });
        }
        return totals;
      },
    });
    counts.learn("mcp.tool:k", { points: 1, expire: 2_100_000_060_000 }, 60_000);
    for (let i = 0; i < 5; i++) expect(counts.consume("mcp.tool:k", 200, 1)?.ok).toBe(true);
    const inFlight = counts.flush();
    for (let i = 0; i < 3; i++) expect(counts.consume("mcp.tool:k", 200, 1)?.ok).toBe(true);
    const closed = counts.close();
    openDoor();
    await Promise.all([inFlight, closed]);
    expect(written).toEqual([5, 3]);
  });
});
