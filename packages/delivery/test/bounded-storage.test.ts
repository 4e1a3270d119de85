import { sql } from "@doorbell/store";
import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pruneDeliveries, replayDeadLetter } from "../src/index.js";
import { activeSubscription, DAY, endpointForSuite, engineOn, fakeClock, T0 } from "./harness.js";

// Bounded storage: under a steady load that keeps failing some doorbells every day, the delivery
// tables stop growing once the retention window is reached, when the daily prune runs. A dry run
// counts exactly what the prune then deletes, and changes nothing.
const SECOND = 1000;
/** When an MCP Events event is tried after its first attempt (1 s, 5 s, 30 s, 2 min apart). */
const ATTEMPTS_AT = [0, 1, 6, 36, 156].map((s) => s * SECOND);
const RETENTION = { maxAgeMs: 3 * DAY, deadLetterMaxAgeMs: 7 * DAY };

forEachEngine({ describe, beforeAll, afterAll }, (fixture) => {
  const endpoint = endpointForSuite();

  it("two weeks of a steady load: the row counts stop growing once the window is reached", async () => {
    const clock = fakeClock();
    const { engine, db, store } = await engineOn(fixture.db, clock.now);
    await db.deleteFrom("delivery_attempt_log").execute();
    await db.deleteFrom("delivery_dead_letters").execute();
    const subs: Array<{ id: string }> = [];
    for (let i = 0; i < 2; i++) {
      subs.push(
        await activeSubscription(engine, db, clock, endpoint.url, {
          channel: "mcp",
          subscriberId: `5d1e0b7c-3a4f-4e21-9c8b-7f6a5e4d3c2${i}`,
          expiresAt: T0 + 30 * DAY,
          refreshBefore: T0 + 27 * DAY,
        }),
      );
    }
    const counts = async () => {
      const count = async (table: "delivery_attempt_log" | "delivery_dead_letters" | "delivery_outbox") =>
        Number(
          (
            await db
              .selectFrom(table)
              .select((eb) => eb.fn.countAll<number>().as("n"))
              .executeTakeFirstOrThrow()
          ).n,
        );
      return {
        attempts: await count("delivery_attempt_log"),
        deadLetters: await count("delivery_dead_letters"),
        outbox: await count("delivery_outbox"),
      };
    };
    const pages = async () =>
      store.dialect === "postgres"
        ? undefined
        : Number((await sql<{ page_count: number }>`pragma page_count`.execute(db)).rows[0]?.page_count);

    const byDay: Array<Awaited<ReturnType<typeof counts>> & { pages: number | undefined }> = [];
    for (let day = 0; day < 15; day++) {
      const start = T0 + day * DAY;
      clock.set(start);
      // Each subscription gets three events a day; the receiver refuses the first of each.
      endpoint.control.byEventId = Object.fromEntries(subs.map((sub) => [`evt_${sub.id}_${day}_1`, 500]));
      await store.transaction(async (trx) => {
        for (const sub of subs) {
          for (let n = 1; n <= 3; n++) {
            await engine.enqueue(trx, sub.id, {
              type: "incident.created",
              eventId: `evt_${sub.id}_${day}_${n}`,
              cursor: `c${day}.${n}`,
              data: { day, n },
            });
          }
        }
      });
      for (const at of ATTEMPTS_AT) {
        clock.set(start + at);
        await engine.runDue();
      }
      // Yesterday's dead letter of the first subscription is replayed (and delivered) every other day.
      if (day % 2 === 1) {
        const dead = await db
          .selectFrom("delivery_dead_letters")
          .select("id")
          .where("subscription_id", "=", (subs[0] as { id: string }).id)
          .where("replayed_at", "is", null)
          .where("created_at", "<", start)
          .orderBy("created_at", "desc")
          .executeTakeFirstOrThrow();
        clock.set(start + 200 * SECOND);
        await replayDeadLetter(store, dead.id, { clock: clock.now });
        await engine.runDue();
      }
      clock.set(start + 300 * SECOND);

      const before = await counts();
      const dry = await pruneDeliveries(db, { now: clock.now(), ...RETENTION, dryRun: true });
      expect(await counts()).toEqual(before);
      // Batches of 4 with no pause: many batches, each deleting by the indexed age.
      const pruned = await pruneDeliveries(db, { now: clock.now(), ...RETENTION, batchSize: 4, pauseMs: 0 });
      expect(pruned.deleted).toEqual(dry.deleted);
      const after = await counts();
      expect(after.attempts).toBe(before.attempts - pruned.deleted.delivery_attempt_log);
      expect(after.deadLetters).toBe(before.deadLetters - pruned.deleted.delivery_dead_letters);
      byDay.push({ ...after, pages: await pages() });
    }

    // Every delivered doorbell left no row: nothing waits in the outbox at the end of a day.
    expect(byDay.every((d) => d.outbox === 0)).toBe(true);
    // Growing while the window fills...
    expect((byDay[2] as { attempts: number }).attempts).toBeGreaterThan(
      (byDay[0] as { attempts: number }).attempts,
    );
    expect((byDay[6] as { deadLetters: number }).deadLetters).toBeGreaterThan(
      (byDay[0] as { deadLetters: number }).deadLetters,
    );
    // ...then flat: from the day the longest window (7 days) is reached, the same counts every day
    // (dead letters alternate with the replays every other day).
    const steady = byDay.slice(8);
    const attempts = new Set(steady.map((d) => d.attempts));
    expect(attempts.size).toBe(1);
    expect([...attempts][0]).toBe(2 * 5 * 3);
    const deadLetters = new Set(steady.map((d) => d.deadLetters));
    expect(deadLetters.size).toBeLessThanOrEqual(2);
    expect(Math.max(...deadLetters)).toBeLessThanOrEqual(2 * 7);
    if (store.dialect !== "postgres") {
      // SQLite reuses the pages the prune freed: over the last week the file stays the same size
      // but for a page of B-tree slack (while the window filled, it grew a page every two days).
      const first = (steady[0] as { pages: number }).pages;
      const last = (steady.at(-1) as { pages: number }).pages;
      expect(last - first).toBeLessThanOrEqual(1);
    }
  });

  it("refuses a retention shorter than a day", async () => {
    const { db } = await engineOn(fixture.db, Date.now);
    await expect(pruneDeliveries(db, { now: Date.now(), maxAgeMs: 1000 })).rejects.toThrow(/at least a day/);
  });
});
