import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { coalescingLimits } from "../src/index.js";
import {
  activeSubscription,
  DAY,
  endpointForSuite,
  engineOn,
  fakeClock,
  HOUR,
  MINUTE,
  matchesDoorbell,
  runAtNextWake,
  T0,
} from "./harness.js";

// Push profile §6 rule 6: one intent.matches.delivered per subscription per 15 minutes, newMatches
// added up and the latest latestDeliveredAt kept; at most 24 a day; status events not coalesced.
forEachEngine({ describe, beforeAll, afterAll }, (fixture) => {
  const endpoint = endpointForSuite();

  async function setup(limits = {}) {
    const clock = fakeClock();
    const { engine, db, store } = await engineOn(fixture.db, clock.now, { coalescing: limits });
    const sub = await activeSubscription(engine, db, clock, endpoint.url);
    const matches = (newMatches: number, latest: string) =>
      store.transaction((trx) =>
        engine.enqueue(trx, sub.id, {
          type: "intent.matches.delivered",
          data: { subscriptionId: sub.subscriberId, newMatches, latestDeliveredAt: latest },
        }),
      );
    const status = () =>
      store.transaction((trx) => engine.enqueue(trx, sub.id, { type: "intent.status.changed", data: {} }));
    return { clock, engine, db, sub, matches, status };
  }
  const doorbells = () => endpoint.events().filter((e) => e.json.type === "intent.matches.delivered");

  it("rings at once, then adds up everything inside the next 15 minutes into one doorbell", async () => {
    const { clock, engine, db, sub, matches } = await setup();
    expect(await matches(1, "2026-11-30T11:59:00Z")).toBe("queued");
    await engine.runDue();
    expect(doorbells().map((e) => e.json.data)).toEqual([
      { subscriptionId: sub.subscriberId, newMatches: 1, latestDeliveredAt: "2026-11-30T11:59:00Z" },
    ]);
    clock.advance(MINUTE);
    expect(await matches(2, "2026-11-30T12:01:00Z")).toBe("queued");
    clock.advance(MINUTE);
    expect(await matches(3, "2026-11-30T12:00:30Z")).toBe("coalesced");
    await engine.runDue();
    expect(doorbells()).toHaveLength(1);
    const wake = await runAtNextWake(engine, db, clock, sub.id);
    expect(wake).toBe(T0 + 15 * MINUTE);
    expect(doorbells().map((e) => e.json.data)).toEqual([
      { subscriptionId: sub.subscriberId, newMatches: 1, latestDeliveredAt: "2026-11-30T11:59:00Z" },
      { subscriptionId: sub.subscriberId, newMatches: 5, latestDeliveredAt: "2026-11-30T12:01:00Z" },
    ]);
  });

  it("a match added to those already waiting leaves the worker asleep until the window opens", async () => {
    const { clock, engine, db, sub, matches } = await setup();
    const wakeAt = async () =>
      (
        await db
          .selectFrom("delivery_subscriptions")
          .select("wake_at")
          .where("id", "=", sub.id)
          .executeTakeFirstOrThrow()
      ).wake_at;
    await matches(1, "2026-11-30T11:59:00Z");
    await engine.runDue();
    clock.advance(MINUTE);
    // The first to wait wakes the worker, which puts the subscription to sleep until the window.
    expect(await matches(1, "2026-11-30T12:00:00Z")).toBe("queued");
    expect(await wakeAt()).toBe(clock.now());
    await engine.runDue();
    expect(await wakeAt()).toBe(T0 + 15 * MINUTE);
    // The next ones only add to the count: no wake, nothing for a worker to claim.
    clock.advance(MINUTE);
    expect(await matches(4, "2026-11-30T12:01:00Z")).toBe("coalesced");
    expect(await wakeAt()).toBe(T0 + 15 * MINUTE);
    expect(await engine.runDue()).toBe(0);
    expect(await runAtNextWake(engine, db, clock, sub.id)).toBe(T0 + 15 * MINUTE);
    expect(doorbells().map((e) => e.json.data?.newMatches)).toEqual([1, 5]);
  });

  it("status events are never held back by the matches window", async () => {
    const { clock, engine, matches, status } = await setup();
    await matches(1, "2026-11-30T11:59:00Z");
    await engine.runDue();
    clock.advance(MINUTE);
    await matches(1, "2026-11-30T12:00:00Z");
    await status();
    await status();
    await engine.runDue();
    expect(endpoint.events().map((e) => e.json.type)).toEqual([
      "intent.matches.delivered",
      "intent.status.changed",
      "intent.status.changed",
    ]);
  });

  it("at most 24 matches doorbells in a day, however many matches arrive", async () => {
    const { clock, engine, db, sub, matches } = await setup();
    // A match every 5 minutes for almost a day: the cap is reached after 5 h 45 min.
    for (let minute = 0; minute < 24 * 60; minute += 5) {
      clock.set(T0 + minute * MINUTE);
      await matches(1, new Date(T0 + minute * MINUTE).toISOString());
      await engine.runDue();
    }
    expect(doorbells()).toHaveLength(24);
    const times = doorbells().map((e) => Number(e.headers["webhook-timestamp"]) * 1000);
    for (let i = 1; i < times.length; i++) {
      expect((times[i] as number) - (times[i - 1] as number)).toBeGreaterThanOrEqual(15 * MINUTE);
    }
    // The rest waits for the next day and then arrives as one doorbell: no match is lost.
    expect(await runAtNextWake(engine, db, clock, sub.id)).toBe(T0 + DAY);
    expect(doorbells()).toHaveLength(25);
    const total = doorbells().reduce((sum, e) => sum + (e.json.data?.newMatches as number), 0);
    expect(total).toBe(24 * 12);
  });

  it("a holder may lower the numbers but never raise them", async () => {
    expect(coalescingLimits({ windowMs: HOUR, dailyCap: 4 })).toEqual({ windowMs: HOUR, dailyCap: 4 });
    expect(() => coalescingLimits({ windowMs: 5 * MINUTE })).toThrow(/only be raised above 15 minutes/);
    expect(() => coalescingLimits({ dailyCap: 25 })).toThrow(/1–24/);
    const { clock, engine, db, sub, matches } = await setup({ windowMs: HOUR });
    await matches(1, "2026-11-30T11:59:00Z");
    await engine.runDue();
    clock.advance(MINUTE);
    await matches(1, "2026-11-30T12:01:00Z");
    await engine.runDue();
    expect(await runAtNextWake(engine, db, clock, sub.id)).toBe(T0 + HOUR);
    expect(doorbells()).toHaveLength(2);
  });

  it("never rings a subscription its caller says may not carry it: not queued after, not built from what waited", async () => {
    const clock = fakeClock();
    const allowed = new Set<string>();
    const { engine, db, store } = await engineOn(fixture.db, clock.now, {
      coalesce: {
        ...matchesDoorbell,
        carriers: async (_db, ids) => new Set(ids.filter((id) => allowed.has(id))),
      },
    });
    const sub = await activeSubscription(engine, db, clock, endpoint.url);
    const matches = (newMatches: number, latest: string) =>
      store.transaction((trx) =>
        engine.enqueue(trx, sub.id, {
          type: "intent.matches.delivered",
          data: { subscriptionId: sub.subscriberId, newMatches, latestDeliveredAt: latest },
        }),
      );
    expect(await matches(1, "2026-11-30T11:59:00Z")).toBe("dropped");
    allowed.add(sub.id);
    expect(await matches(1, "2026-11-30T11:59:30Z")).toBe("queued");
    await engine.runDue();
    clock.advance(MINUTE);
    // Waiting for the window to open when the caller stops allowing it.
    expect(await matches(2, "2026-11-30T12:01:00Z")).toBe("queued");
    allowed.delete(sub.id);
    expect(await matches(3, "2026-11-30T12:02:00Z")).toBe("dropped");
    clock.advance(15 * MINUTE);
    await engine.runDue();
    expect(doorbells().map((e) => e.json.data?.newMatches)).toEqual([1]);
    const row = await db
      .selectFrom("delivery_subscriptions")
      .select("agg_new_matches")
      .where("id", "=", sub.id)
      .executeTakeFirstOrThrow();
    expect(row.agg_new_matches).toBe(0);
  });

  it("refuses a matches event without a positive count or a date-time", async () => {
    const { matches } = await setup();
    await expect(matches(0, "2026-11-30T11:59:00Z")).rejects.toThrow(/positive integer/);
    await expect(matches(1, "yesterday")).rejects.toThrow(/date-time/);
  });
});
