import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  activeSubscription,
  DAY,
  endpointForSuite,
  engineOn,
  fakeClock,
  HOUR,
  runAtNextWake,
  T0,
} from "./harness.js";

// Push profile §6 rule 5 through the engine: retries on the schedule (413 too), 410 ends at once, 3xx is a failure, Retry-After is honoured, exhaustion ends with delivery-failed.
forEachEngine({ describe, beforeAll, afterAll }, (fixture) => {
  const endpoint = endpointForSuite();

  async function setup() {
    const clock = fakeClock();
    const { engine, db, store } = await engineOn(fixture.db, clock.now);
    const sub = await activeSubscription(engine, db, clock, endpoint.url);
    const send = (n: number) =>
      store.transaction((trx) => engine.enqueue(trx, sub.id, { type: "intent.status.changed", data: { n } }));
    return { clock, engine, db, sub, send };
  }

  it("retries a 500 on the schedule with the same webhook-id, then ends with delivery-failed and one subscription.ended", async () => {
    const { clock, engine, db, sub, send } = await setup();
    endpoint.control.status = 500;
    await send(1);
    await engine.runDue();
    while ((await runAtNextWake(engine, db, clock, sub.id)) !== null && clock.now() < T0 + 2 * DAY) {
      if ((await engine.get(db, sub.id)).status === "ended") break;
    }
    const events = endpoint.events();
    const attempts = events.filter((e) => e.json.type === "intent.status.changed");
    expect(attempts).toHaveLength(8);
    expect(new Set(attempts.map((e) => e.headers["webhook-id"])).size).toBe(1);
    const firstAt = Number(attempts[0]?.headers["webhook-timestamp"]);
    const lastAt = Number(attempts[7]?.headers["webhook-timestamp"]);
    expect(lastAt - firstAt).toBe(24 * 3600);
    const ended = events.filter((e) => e.json.type === "subscription.ended");
    expect(ended).toHaveLength(1);
    expect(ended[0]?.json.data).toEqual({ subscriptionId: sub.subscriberId, reason: "delivery-failed" });
    const view = await engine.get(db, sub.id);
    expect(view).toMatchObject({ status: "ended", endedReason: "delivery-failed" });
    expect(view.deliveryStatus.lastError).toBe("http_5xx");
  });

  it("410 Gone ends the subscription at once, without retries or subscription.ended", async () => {
    const { engine, db, sub, send } = await setup();
    endpoint.control.status = 410;
    await send(1);
    await send(2);
    await engine.runDue();
    expect(endpoint.events().map((e) => e.json.type)).toEqual(["intent.status.changed"]);
    expect(await engine.get(db, sub.id)).toMatchObject({ status: "ended", endedReason: "gone" });
    await send(3);
    await engine.runDue();
    expect(endpoint.events()).toHaveLength(1);
  });

  it("413 is retried like any answer other than 2xx (rule 5), order kept; MCP Events drops it instead", async () => {
    const { clock, engine, db, sub, send } = await setup();
    endpoint.control.script = [413];
    await send(1);
    await send(2);
    await engine.runDue();
    expect(endpoint.events().map((e) => e.json.data?.n)).toEqual([1]);
    expect((await engine.get(db, sub.id)).deliveryStatus.lastError).toBe("http_4xx");
    await runAtNextWake(engine, db, clock, sub.id);
    expect(endpoint.events().map((e) => e.json.data?.n)).toEqual([1, 1, 2]);
    expect((await engine.get(db, sub.id)).status).toBe("active");
  });

  it("a redirect is a failure and is retried, never followed", async () => {
    const { clock, engine, db, sub, send } = await setup();
    endpoint.control.script = [307];
    endpoint.control.headers = { location: "http://127.0.0.1:1/elsewhere" };
    await send(1);
    await engine.runDue();
    expect((await engine.get(db, sub.id)).deliveryStatus.lastError).toBe("http_3xx");
    endpoint.control.headers = {};
    await runAtNextWake(engine, db, clock, sub.id);
    expect(endpoint.events().map((e) => e.json.data?.n)).toEqual([1, 1]);
    expect((await engine.get(db, sub.id)).deliveryStatus).toMatchObject({
      lastError: null,
      failedSince: null,
    });
  });

  it("Retry-After on a 503 moves the next attempt later than the schedule's 5 s", async () => {
    const { clock, engine, db, sub, send } = await setup();
    endpoint.control.script = [503];
    endpoint.control.headers = { "retry-after": "45" };
    await send(1);
    const before = clock.now();
    await engine.runDue();
    endpoint.control.headers = {};
    const wake = await runAtNextWake(engine, db, clock, sub.id);
    expect(wake).toBe(before + 45_000);
    expect(endpoint.events()).toHaveLength(2);
  });

  it("a failing head blocks the events behind it: order is kept", async () => {
    const { clock, engine, db, sub, send } = await setup();
    endpoint.control.script = [500, 500];
    for (let n = 1; n <= 5; n++) await send(n);
    await engine.runDue();
    await runAtNextWake(engine, db, clock, sub.id);
    await runAtNextWake(engine, db, clock, sub.id);
    expect(endpoint.events().map((e) => e.json.data?.n)).toEqual([1, 1, 1, 2, 3, 4, 5]);
    expect(clock.now()).toBeLessThan(T0 + HOUR);
  });
});
