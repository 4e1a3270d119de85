import { forEachEngine } from "@doorbell/store/testing";
import { createMcpVerifier } from "@doorbell/webhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DeliveryEngineOptions } from "../src/index.js";
import { activeSubscription, endpointForSuite, engineOn, fakeClock, runAtNextWake, T0 } from "./harness.js";

// The MCP Events sketch channel: X-MCP-* signatures, `verification` challenge, 410 drops one event,
// sustained failures suspend delivery (deliveryStatus.active = false) until the client refreshes.
forEachEngine({ describe, beforeAll, afterAll }, (fixture) => {
  const endpoint = endpointForSuite();

  async function setup(more: Partial<DeliveryEngineOptions> = {}) {
    const clock = fakeClock();
    const { engine, db, store } = await engineOn(fixture.db, clock.now, more);
    const sub = await activeSubscription(engine, db, clock, endpoint.url, {
      channel: "mcp",
      subscriberId: "f47ac10b-58cc-4372-a567-0e02b2c3d479",
    });
    let n = 0;
    const send = () =>
      store.transaction((trx) => {
        n++;
        return engine.enqueue(trx, sub.id, {
          type: "incident.created",
          eventId: `evt_${n}`,
          cursor: `c${n}`,
          data: { n },
        });
      });
    return { clock, engine, db, sub, send };
  }

  it("413 drops that one event without retry (the MCP rule; push retries it) and the next is delivered", async () => {
    const { engine, db, sub, send } = await setup();
    endpoint.control.script = [413];
    await send();
    await send();
    await engine.runDue();
    expect(endpoint.events().map((e) => (e.json as { data?: { n?: number } }).data?.n)).toEqual([1, 2]);
    expect((await engine.get(db, sub.id)).deliveryStatus.active).toBe(true);
  });

  it("verifies with the MCP challenge and delivers X-MCP-signed events in order", async () => {
    const { clock, engine, sub, send } = await setup();
    expect(endpoint.challenges()[0]?.json).toMatchObject({ type: "verification", id: sub.subscriberId });
    await send();
    await send();
    await engine.runDue();
    const verifier = createMcpVerifier({ secrets: [sub.secret], clock: clock.now });
    const events = endpoint.events();
    expect(events.map((e) => e.json)).toEqual([
      {
        id: sub.subscriberId,
        eventId: "evt_1",
        name: "incident.created",
        timestamp: new Date(T0).toISOString(),
        data: { n: 1 },
        cursor: "c1",
      },
      {
        id: sub.subscriberId,
        eventId: "evt_2",
        name: "incident.created",
        timestamp: new Date(T0).toISOString(),
        data: { n: 2 },
        cursor: "c2",
      },
    ]);
    for (const event of events) {
      expect(verifier.verify(event.headers as Record<string, string>, event.body).subscriptionId).toBe(
        sub.subscriberId,
      );
    }
  });

  it("410 drops that event and keeps the subscription", async () => {
    const { engine, db, sub, send } = await setup();
    endpoint.control.script = [410];
    await send();
    await send();
    await engine.runDue();
    expect(endpoint.events().map((e) => e.json.eventId)).toEqual(["evt_1", "evt_2"]);
    expect((await engine.get(db, sub.id)).status).toBe("active");
  });

  it("sustained failures suspend delivery; a refresh resumes it and the pending events are retried", async () => {
    // A low threshold: the third failed attempt suspends, while both events still have retries.
    const { clock, engine, db, sub, send } = await setup({
      events: { suspendAfterFailures: 3, suspendAfterMs: 0 },
    });
    endpoint.control.status = 503;
    await send();
    await send();
    await engine.runDue();
    while ((await engine.get(db, sub.id)).deliveryStatus.active)
      await runAtNextWake(engine, db, clock, sub.id);
    const view = await engine.get(db, sub.id);
    expect(view.status).toBe("active");
    expect(view.deliveryStatus).toMatchObject({ active: false, lastError: "http_5xx" });
    const attempts = endpoint.events().length;
    expect(attempts).toBe(3);
    endpoint.control.status = 200;
    clock.advance(60_000);
    await engine.runDue();
    expect(endpoint.events()).toHaveLength(attempts);
    await engine.renew(db, sub.id, {
      expiresAt: clock.now() + 86_400_000,
      refreshBefore: clock.now() + 3_600_000,
    });
    await engine.runDue();
    expect(
      endpoint
        .events()
        .slice(attempts)
        .map((e) => e.json.eventId),
    ).toEqual(["evt_1", "evt_2"]);
    expect((await engine.get(db, sub.id)).deliveryStatus).toMatchObject({ active: true, lastError: null });
  });

  it("an MCP event without an eventId is refused", async () => {
    const { engine, db, sub } = await setup();
    await expect(engine.enqueue(db, sub.id, { type: "incident.created", data: {} })).rejects.toThrow(
      /eventId/,
    );
  });
});
