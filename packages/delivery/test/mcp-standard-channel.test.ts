import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { forEachEngine } from "@doorbell/store/testing";
import {
  createReceiver,
  createStandardVerifier,
  MCP_SUBSCRIPTION_ID,
  type ReceivedWebhook,
  toNodeHandler,
} from "@doorbell/webhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DeliveryEngineOptions, followsMcpRules, standardWebhookId } from "../src/index.js";
import {
  activeSubscription,
  endpointForSuite,
  engineOn,
  fakeClock,
  newSecret,
  runAtNextWake,
  T0,
} from "./harness.js";

// The MCP Events channel of SEP-3415 subscribers: every "mcp" rule (410 drops one event, each event
// retried on its own, sustained failures suspend until a refresh, eventId is the idempotency key)
// on the Standard Webhooks wire.
const SUBSCRIBER = "sub_5c8f0a1b2c3d4e5f60718293a4b5c6d7";

forEachEngine({ describe, beforeAll, afterAll }, (fixture) => {
  const endpoint = endpointForSuite();

  async function setup(url = endpoint.url, secret = newSecret(), more: Partial<DeliveryEngineOptions> = {}) {
    const clock = fakeClock();
    const { engine, db, store } = await engineOn(fixture.db, clock.now, more);
    const sub = await activeSubscription(engine, db, clock, url, {
      channel: "mcp-standard",
      subscriberId: SUBSCRIBER,
      secret,
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
    return { clock, engine, db, store, sub, send };
  }

  it("mcp-standard follows the MCP rules; push does not", () => {
    expect(followsMcpRules("mcp-standard")).toBe(true);
    expect(followsMcpRules("mcp")).toBe(true);
    expect(followsMcpRules("push")).toBe(false);
  });

  it("challenges with the SEP-3415 verification body and signs events Standard Webhooks style, webhook-id = eventId", async () => {
    const { clock, engine, sub, send } = await setup();
    const [challenge] = endpoint.challenges();
    expect(Object.keys(challenge?.json ?? {}).sort()).toEqual(["challenge", "type"]);
    expect(challenge?.json.type).toBe("verification");
    expect(challenge?.headers[MCP_SUBSCRIPTION_ID]).toBe(SUBSCRIBER);
    expect(challenge?.headers["x-mcp-signature"]).toBeUndefined();
    await send();
    await send();
    await engine.runDue();
    const events = endpoint.events();
    expect(events.map((e) => e.json)).toEqual([
      {
        eventId: "evt_1",
        name: "incident.created",
        timestamp: new Date(T0).toISOString(),
        data: { n: 1 },
        cursor: "c1",
      },
      {
        eventId: "evt_2",
        name: "incident.created",
        timestamp: new Date(T0).toISOString(),
        data: { n: 2 },
        cursor: "c2",
      },
    ]);
    const verifier = createStandardVerifier({ secrets: [sub.secret], clock: clock.now });
    for (const [i, event] of events.entries()) {
      expect(event.headers[MCP_SUBSCRIPTION_ID]).toBe(SUBSCRIBER);
      expect(verifier.verify(event.headers as Record<string, string>, event.body).id).toBe(`evt_${i + 1}`);
    }
  });

  it("a createReceiver with scheme standard answers the challenge and accepts each event once", async () => {
    const secret = newSecret();
    const got: ReceivedWebhook[] = [];
    const server = createServer(
      toNodeHandler(
        createReceiver({
          scheme: "standard",
          keys: { secrets: [secret] },
          clock: () => T0,
          handler: (event) => {
            got.push(event);
          },
        }),
      ),
    );
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
      const { engine, db, sub, send } = await setup(url, secret);
      expect((await engine.get(db, sub.id)).verified).toBe(true);
      await send();
      await engine.runDue();
      expect(
        got.map((e) => [e.id, e.headers.get(MCP_SUBSCRIPTION_ID), (e.json as { data: unknown }).data]),
      ).toEqual([["evt_1", SUBSCRIBER, { n: 1 }]]);
    } finally {
      server.close();
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
    const { clock, engine, db, sub, send } = await setup(endpoint.url, newSecret(), {
      events: { suspendAfterFailures: 3, suspendAfterMs: 0 },
    });
    endpoint.control.status = 503;
    await send();
    await send();
    await engine.runDue();
    while ((await engine.get(db, sub.id)).deliveryStatus.active)
      await runAtNextWake(engine, db, clock, sub.id);
    expect(await engine.get(db, sub.id)).toMatchObject({
      status: "active",
      deliveryStatus: { active: false, lastError: "http_5xx" },
    });
    const attempts = endpoint.events().length;
    expect(attempts).toBe(3);
    endpoint.control.status = 200;
    await engine.renew(db, sub.id, {
      expiresAt: clock.now() + 86_400_000,
      refreshBefore: clock.now() + 3_600_000,
    });
    // evt_2 was due; evt_1 keeps its retry time, and evt_2 goes without a cursor until it is in.
    await engine.runDue();
    await runAtNextWake(engine, db, clock, sub.id);
    expect(
      endpoint
        .events()
        .slice(attempts)
        .map((e) => [e.json.eventId, e.json.cursor]),
    ).toEqual([
      ["evt_2", undefined],
      ["evt_1", "c1"],
    ]);
    expect((await engine.get(db, sub.id)).deliveryStatus).toMatchObject({ active: true, lastError: null });
  });

  it("control envelopes: an error is SEP-3415's terminated, a gap carries the fresh cursor", async () => {
    const { engine, db, sub } = await setup();
    await engine.enqueue(db, sub.id, {
      type: "error",
      eventId: "err_1",
      data: {},
      error: { code: -32012, message: "Unauthorized", data: { reason: "Access revoked" } },
    });
    await engine.enqueue(db, sub.id, { type: "gap", eventId: "gap_1", data: {}, gap: { cursor: "c9" } });
    await engine.runDue();
    expect(endpoint.events().map((e) => e.json)).toEqual([
      {
        type: "terminated",
        error: { code: -32012, message: "Unauthorized", data: { reason: "Access revoked" } },
      },
      { type: "gap", cursor: "c9" },
    ]);
  });

  it("an eventId a webhook-id cannot carry (a dot) gets a stable digest as webhook-id", async () => {
    const { engine, db, sub } = await setup();
    await engine.enqueue(db, sub.id, { type: "log", eventId: "orders.3.1042", data: {} });
    await engine.runDue();
    const [event] = endpoint.events();
    expect(event?.json.eventId).toBe("orders.3.1042");
    expect(event?.headers["webhook-id"]).toBe(standardWebhookId("orders.3.1042"));
    expect(standardWebhookId("orders.3.1042")).toMatch(/^evt_[A-Za-z0-9_-]{32}$/);
  });

  it("a gap envelope on the sketch channel is refused (the sketch reports CursorExpired)", async () => {
    const clock = fakeClock();
    const { engine, db } = await engineOn(fixture.db, clock.now);
    const sketch = await activeSubscription(engine, db, clock, endpoint.url, {
      channel: "mcp",
      subscriberId: "f47ac10b-58cc-4372-a567-0e02b2c3d479",
    });
    await expect(
      engine.enqueue(db, sketch.id, { type: "gap", eventId: "gap_1", data: {}, gap: { cursor: null } }),
    ).rejects.toThrow(/mcp-standard/);
  });
});
