import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { activeSubscription, endpointForSuite, engineOn, fakeClock } from "./harness.js";

// A worker that dies mid-claim leaves a lease behind; once it expires another worker takes over.
// Two workers never hold one subscription at once, so order and one-in-flight hold across them.
forEachEngine({ describe, beforeAll, afterAll }, (fixture) => {
  const endpoint = endpointForSuite();

  it("a lease left by a dead worker blocks others until it expires, then the event is delivered", async () => {
    const clock = fakeClock();
    const { engine, db, store } = await engineOn(fixture.db, clock.now);
    const sub = await activeSubscription(engine, db, clock, endpoint.url);
    await store.transaction((trx) =>
      engine.enqueue(trx, sub.id, { type: "intent.status.changed", data: {} }),
    );
    // The dead worker: it claimed the subscription (as claimDue does) and never came back.
    await db
      .updateTable("delivery_subscriptions")
      .set({ lease_owner: "wrk_dead", lease_until: clock.now() + 60_000 })
      .where("id", "=", sub.id)
      .execute();
    expect(await engine.runDue()).toBe(0);
    expect(endpoint.events()).toHaveLength(0);
    clock.advance(60_000);
    await engine.runDue();
    expect(endpoint.events()).toHaveLength(1);
  });

  it("refuses a lease too short for one attempt", async () => {
    const { engine } = await engineOn(fixture.db, Date.now);
    expect(() => engine.worker({ leaseMs: 3_000 })).toThrow(
      /leaseMs must exceed the egress timeout plus 5000 ms/,
    );
  });

  it("two workers in one process deliver 200 events of 10 subscriptions, each in order, once", async () => {
    const { engine, db, store } = await engineOn(fixture.db, Date.now);
    const subs: Awaited<ReturnType<typeof activeSubscription>>[] = [];
    for (let i = 0; i < 10; i++)
      subs.push(await activeSubscription(engine, db, { now: Date.now }, endpoint.url));
    const workers = [
      engine.worker({ concurrency: 4, pollMs: 20 }),
      engine.worker({ concurrency: 4, pollMs: 20 }),
    ];
    for (const worker of workers) worker.start();
    for (let n = 0; n < 20; n++) {
      await store.transaction(async (trx) => {
        for (const sub of subs)
          await engine.enqueue(trx, sub.id, { type: "intent.status.changed", data: { sub: sub.id, n } });
      });
    }
    const deadline = Date.now() + 20_000;
    while (endpoint.events().length < 200 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    await Promise.all(workers.map((worker) => worker.stop()));
    const events = endpoint.events();
    expect(events).toHaveLength(200);
    for (const sub of subs) {
      const ns = events.filter((e) => e.json.data?.sub === sub.id).map((e) => e.json.data?.n);
      expect(ns).toEqual(Array.from({ length: 20 }, (_, n) => n));
    }
  });
});
