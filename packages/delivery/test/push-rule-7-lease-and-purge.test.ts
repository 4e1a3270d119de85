import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  activeSubscription,
  DAY,
  endpointForSuite,
  engineOn,
  fakeClock,
  runAtNextWake,
  T0,
} from "./harness.js";

// Push profile §6 rules 7–8: the lease ends at expiresAt unless renewed; subscription.ended is sent
// once (best effort); the subscription, its secret and its endpoint are deleted within 30 days.
forEachEngine({ describe, beforeAll, afterAll }, (fixture) => {
  const endpoint = endpointForSuite();

  it("ends at expiresAt with one subscription.ended, then purges secret and endpoint", async () => {
    const clock = fakeClock();
    const { engine, db } = await engineOn(fixture.db, clock.now, { purgeAfterMs: 7 * DAY });
    const sub = await activeSubscription(engine, db, clock, endpoint.url, {
      expiresAt: T0 + 2 * DAY,
      refreshBefore: T0 + DAY,
    });
    expect(await runAtNextWake(engine, db, clock, sub.id)).toBe(T0 + 2 * DAY);
    expect(await engine.get(db, sub.id)).toMatchObject({ status: "ended", endedReason: "lease-expired" });
    const ended = endpoint.events().filter((e) => e.json.type === "subscription.ended");
    expect(ended.map((e) => e.json.data)).toEqual([
      { subscriptionId: sub.subscriberId, reason: "lease-expired" },
    ]);
    expect(await runAtNextWake(engine, db, clock, sub.id)).toBe(T0 + 9 * DAY);
    expect(
      await db.selectFrom("delivery_subscriptions").select("id").where("id", "=", sub.id).execute(),
    ).toEqual([]);
    expect(await db.selectFrom("delivery_outbox").select("id").execute()).toEqual([]);
  });

  it("renewal moves the end; a failed subscription.ended is not retried", async () => {
    const clock = fakeClock();
    const { engine, db } = await engineOn(fixture.db, clock.now);
    const sub = await activeSubscription(engine, db, clock, endpoint.url, {
      expiresAt: T0 + 2 * DAY,
      refreshBefore: T0 + DAY,
    });
    clock.set(T0 + DAY);
    await engine.renew(db, sub.id, { expiresAt: T0 + 10 * DAY, refreshBefore: T0 + 9 * DAY });
    await engine.runDue();
    endpoint.control.status = 500;
    expect(await runAtNextWake(engine, db, clock, sub.id)).toBe(T0 + 10 * DAY);
    expect((await engine.get(db, sub.id)).status).toBe("ended");
    const endedAttempts = () => endpoint.events().filter((e) => e.json.type === "subscription.ended").length;
    expect(endedAttempts()).toBe(1);
    // The next wake-up is the purge, a day later: subscription.ended was not tried again.
    expect(await runAtNextWake(engine, db, clock, sub.id)).toBe(T0 + 11 * DAY);
    expect(endedAttempts()).toBe(1);
  });

  it("ending drops everything still queued; the agent can read what it missed", async () => {
    const clock = fakeClock();
    const { engine, db, store } = await engineOn(fixture.db, clock.now);
    const sub = await activeSubscription(engine, db, clock, endpoint.url);
    endpoint.control.status = 500;
    for (let n = 0; n < 3; n++) {
      await store.transaction((trx) =>
        engine.enqueue(trx, sub.id, { type: "intent.status.changed", data: { n } }),
      );
    }
    await engine.runDue();
    endpoint.control.status = 200;
    await engine.end(db, sub.id, "approval-withdrawn", { notify: true });
    await engine.runDue();
    expect(endpoint.events().map((e) => e.json.type)).toEqual([
      "intent.status.changed",
      "subscription.ended",
    ]);
    expect(
      await store.transaction((trx) =>
        engine.enqueue(trx, sub.id, { type: "intent.status.changed", data: {} }),
      ),
    ).toBe("dropped");
  });

  it("refuses a purge delay beyond 30 days", async () => {
    const clock = fakeClock();
    await expect(engineOn(fixture.db, clock.now, { purgeAfterMs: 31 * DAY })).rejects.toThrow(
      /at most 30 days/,
    );
  });
});
