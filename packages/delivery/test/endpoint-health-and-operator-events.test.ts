import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { forEachEngine } from "@doorbell/store/testing";
import { createStandardVerifier, generateSecret } from "@doorbell/webhooks";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  DeliveryError,
  enableEndpoint,
  listDeliveries,
  OPERATOR_SUBSCRIPTION_ID,
  showDelivery,
} from "../src/index.js";
import {
  activeSubscription,
  DAY,
  endpointForSuite,
  engineOn,
  eventsSubscription,
  fakeClock,
  HOUR,
  MINUTE,
  runAtNextWake,
  T0,
} from "./harness.js";

interface OperatorEvent {
  webhookId: string;
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
  raw: string;
}

/**
 * The operator's receiver: real HTTP on loopback; it verifies each request's Standard Webhooks
 * signature with the operator's secret (at the engine's clock) and keeps only what verified.
 */
async function startOperatorReceiver(clock: () => number) {
  const secret = generateSecret();
  const verifier = createStandardVerifier({ secrets: [secret], clock });
  const events: OperatorEvent[] = [];
  const refused: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      try {
        const verified = verifier.verify(req.headers, raw);
        const json = JSON.parse(raw) as Omit<OperatorEvent, "webhookId" | "raw">;
        events.push({ webhookId: verified.id, raw, ...json });
        res.writeHead(204).end();
      } catch (error) {
        refused.push((error as Error).message);
        res.writeHead(401).end();
      }
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/operator/events`,
    secret,
    events,
    refused,
    ofType: (type: string) => events.filter((event) => event.type === type),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

// Endpoint health (health.ts) and the operator's events (operator-events.ts) through the engine,
// a failing receiver and the operator's own verifying receiver, both real HTTP on loopback.
forEachEngine({ describe, beforeAll, afterAll }, (fixture) => {
  const endpoint = endpointForSuite();
  let operator: Awaited<ReturnType<typeof startOperatorReceiver>>;
  // The operator's receiver checks timestamps against the clock of the test that runs.
  let clockNow: () => number = () => T0;
  beforeAll(async () => {
    operator = await startOperatorReceiver(() => clockNow());
  });
  beforeEach(() => {
    operator.events.length = 0;
    operator.refused.length = 0;
  });
  afterAll(() => operator.close());

  it("an Events endpoint failing every attempt for a week is disabled at 5 days (suspended, endpoint.disabled once), its given-up events are reported, and its first success after a refresh is endpoint.recovered", async () => {
    const setup = await eventsSubscription(fixture.db, endpoint.url, "mcp-standard");
    const { clock, engine, db, sub, send, queued } = setup;
    clockNow = clock.now;
    await engine.configureOperatorWebhook({ url: operator.url, secret: operator.secret });
    endpoint.control.status = 503;
    const drain = async () => {
      await engine.runDue();
      for (let i = 0; i < 20 && (await queued()) > 0; i++) {
        const row = await db
          .selectFrom("delivery_subscriptions")
          .select(["delivery_active", "wake_at"])
          .where("id", "=", sub.id)
          .executeTakeFirstOrThrow();
        if (row.delivery_active !== 1 || row.wake_at === null || Number(row.wake_at) > clock.now() + HOUR)
          break;
        await runAtNextWake(engine, db, clock, sub.id);
        await engine.runDue();
      }
    };
    // The client refreshes every day (its SDK's loop), which resumes a suspended delivery
    // (SEP-3415), and an event comes each day.
    const day = async (n: number) => {
      clock.set(T0 + n * DAY + MINUTE);
      await engine.renew(db, sub.id, { expiresAt: clock.now() + 20 * DAY, refreshBefore: clock.now() + DAY });
      await send(n + 1);
      await drain();
    };
    const health = async () => (await showDelivery(db, sub.id, 20, clock.now())).health;

    await day(0);
    // The first event was given up after its retries (5 attempts within 5 min): reported.
    expect(operator.ofType("delivery.exhausted")).toHaveLength(1);
    expect(operator.ofType("delivery.exhausted")[0]?.data).toMatchObject({
      subscriptionId: sub.id,
      subscriberId: sub.subscriberId,
      channel: "mcp-standard",
      eventType: "incident.created",
      attempts: 5,
      category: "http_5xx",
    });
    expect(await health()).toMatchObject({
      state: "failing",
      successes: 0,
      failures: 5,
      lastErrorCategory: "http_5xx",
    });
    for (let n = 1; n <= 4; n++) await day(n);
    // Four days and more of failures: suspended again and again, never disabled.
    expect(operator.ofType("endpoint.disabled")).toHaveLength(0);
    expect((await health()).state).toBe("suspended");

    await day(5);
    const disabled = operator.ofType("endpoint.disabled");
    expect(disabled).toHaveLength(1);
    expect(disabled[0]?.data).toEqual({
      subscriptionId: sub.id,
      subscriberId: sub.subscriberId,
      channel: "mcp-standard",
      reason: "failing-too-long",
      category: "http_5xx",
      failingSince: new Date(T0 + MINUTE).toISOString(),
      lastSuccessAt: null,
      disabledAt: new Date(T0 + 5 * DAY + MINUTE).toISOString(),
    });
    const view = await engine.get(db, sub.id);
    expect(view.status).toBe("active");
    expect(view.deliveryStatus.active).toBe(false);
    expect(await health()).toMatchObject({
      state: "disabled",
      disabledAt: T0 + 5 * DAY + MINUTE,
      disabledReason: "failing-too-long",
      lastSuccessAt: null,
      sinceLastSuccessMs: null,
    });
    const listed = await listDeliveries(db, { disabled: true, now: clock.now() });
    expect(listed.map((entry) => entry.id)).toEqual([sub.id]);

    // Two more days: each refresh's attempt fails and suspends at once; no second endpoint.disabled.
    await day(6);
    await day(7);
    expect(operator.ofType("endpoint.disabled")).toHaveLength(1);
    // The window counts the last one to two days only.
    const late = await health();
    expect(late.failures).toBeGreaterThan(0);
    expect(late.failures).toBeLessThan(10);
    expect(late.successes).toBe(0);

    // The receiver is back: the next refresh delivers what waits, and the endpoint has recovered.
    endpoint.control.status = 200;
    await day(8);
    expect(await queued()).toBe(0);
    const recovered = operator.ofType("endpoint.recovered");
    expect(recovered).toHaveLength(1);
    expect(recovered[0]?.data).toEqual({
      subscriptionId: sub.id,
      subscriberId: sub.subscriberId,
      channel: "mcp-standard",
      disabledAt: new Date(T0 + 5 * DAY + MINUTE).toISOString(),
      recoveredAt: new Date(T0 + 8 * DAY + MINUTE).toISOString(),
    });
    expect(await health()).toMatchObject({
      state: "healthy",
      disabledAt: null,
      lastErrorCategory: null,
      lastSuccessAt: T0 + 8 * DAY + MINUTE,
    });
    expect((await health()).successes).toBeGreaterThan(0);

    // Every operator event verified, each with its own webhook-id; none names the endpoint or secret.
    expect(operator.refused).toEqual([]);
    expect(new Set(operator.events.map((event) => event.webhookId)).size).toBe(operator.events.length);
    const everything = operator.events.map((event) => event.raw).join("\n");
    const endpointPath = new URL(endpoint.url).pathname;
    const stored = await db
      .selectFrom("delivery_subscriptions")
      .select(["secret_sealed", "url_sealed"])
      .where("id", "=", sub.id)
      .executeTakeFirstOrThrow();
    for (const canary of [endpoint.url, endpointPath, "127.0.0.1", stored.secret_sealed, stored.url_sealed]) {
      expect(everything).not.toContain(canary);
    }
    expect(everything).not.toMatch(/whsec_/);
    const metrics = await engine.metrics.registry.metrics();
    expect(metrics).toMatch(/doorbell_delivery_operator_events_total\{type="endpoint.disabled"\} 1/);
    expect(metrics).toMatch(/doorbell_delivery_operator_events_total\{type="endpoint.recovered"\} 1/);
  });

  it("a push endpoint whose retries run out is disabled the way push profile rule 5 ends it (delivery-failed), with delivery.exhausted and endpoint.disabled", async () => {
    const clock = fakeClock();
    clockNow = clock.now;
    const { engine, db, store } = await engineOn(fixture.db, clock.now);
    await engine.configureOperatorWebhook({ url: operator.url, secret: operator.secret });
    const sub = await activeSubscription(engine, db, clock, endpoint.url);
    endpoint.control.status = 500;
    await store.transaction((trx) =>
      engine.enqueue(trx, sub.id, { type: "intent.status.changed", data: { n: 1 } }),
    );
    await engine.runDue();
    while ((await engine.get(db, sub.id)).status !== "ended" && clock.now() < T0 + 2 * DAY) {
      await runAtNextWake(engine, db, clock, sub.id);
      await engine.runDue();
    }
    expect(await engine.get(db, sub.id)).toMatchObject({ status: "ended", endedReason: "delivery-failed" });
    expect(operator.ofType("delivery.exhausted").map((event) => event.data.eventType)).toEqual([
      "intent.status.changed",
    ]);
    const disabled = operator.ofType("endpoint.disabled");
    expect(disabled.map((event) => [event.data.channel, event.data.reason])).toEqual([
      ["push", "retries-exhausted"],
    ]);
    expect((await showDelivery(db, sub.id, 20, clock.now())).health).toMatchObject({
      state: "disabled",
      disabledReason: "retries-exhausted",
      // Eight attempts of the doorbell and the one of its subscription.ended, all refused.
      failures: 9,
    });
    // Ended is final for push: the operator cannot enable it, the agent subscribes again.
    await expect(enableEndpoint(store, sub.id, { clock: clock.now })).rejects.toThrow(
      /ended is final|must subscribe again/,
    );
  });

  it("a shorter --endpoint-disable-after ends a failing push subscription before rule 5's 24 hours", async () => {
    const clock = fakeClock();
    clockNow = clock.now;
    const { engine, db, store } = await engineOn(fixture.db, clock.now, {
      endpointHealth: { disableAfterMs: 2 * HOUR },
    });
    await engine.configureOperatorWebhook({ url: operator.url, secret: operator.secret });
    const sub = await activeSubscription(engine, db, clock, endpoint.url);
    endpoint.control.status = 502;
    await store.transaction((trx) =>
      engine.enqueue(trx, sub.id, { type: "intent.status.changed", data: { n: 1 } }),
    );
    await engine.runDue();
    while ((await engine.get(db, sub.id)).status !== "ended" && clock.now() < T0 + DAY) {
      await runAtNextWake(engine, db, clock, sub.id);
      await engine.runDue();
    }
    const view = await engine.get(db, sub.id);
    expect(view).toMatchObject({ status: "ended", endedReason: "delivery-failed" });
    expect(clock.now()).toBeLessThan(T0 + 5 * HOUR);
    expect(operator.ofType("endpoint.disabled").map((event) => event.data.reason)).toEqual([
      "failing-too-long",
    ]);
    expect(operator.ofType("delivery.exhausted")).toHaveLength(1);
    // The agent hears rule 5's subscription.ended, as for exhausted retries.
    const ended = endpoint.events().filter((event) => event.json.type === "subscription.ended");
    expect(ended.map((event) => event.json.data?.reason)).toEqual(["delivery-failed"]);
  });

  it("the operator enables a disabled Events endpoint: delivery resumes with a fresh streak, and its first success is endpoint.recovered", async () => {
    const { clock, engine, db, store, sub, send, queued } = await eventsSubscription(
      fixture.db,
      endpoint.url,
      "mcp",
      {
        endpointHealth: { disableAfterMs: HOUR },
        events: { suspendAfterMs: 24 * HOUR, suspendAfterFailures: 1000 },
      },
    );
    clockNow = clock.now;
    await engine.configureOperatorWebhook({ url: operator.url, secret: operator.secret });
    endpoint.control.status = 500;
    for (let n = 1; n <= 30 && (await engine.get(db, sub.id)).deliveryStatus.active; n++) {
      clock.set(T0 + n * 10 * MINUTE);
      await send(n);
      await engine.runDue();
    }
    expect(operator.ofType("endpoint.disabled")).toHaveLength(1);
    expect((await engine.get(db, sub.id)).deliveryStatus.active).toBe(false);
    expect(await queued()).toBeGreaterThan(0);

    endpoint.control.status = 200;
    const enabled = await enableEndpoint(store, sub.subscriberId, { clock: clock.now });
    expect(enabled).toEqual({ subscriptionId: sub.id, resumed: true });
    const row = await db
      .selectFrom("delivery_subscriptions")
      .select(["delivery_active", "failed_since", "consecutive_failures", "disabled_at"])
      .where("id", "=", sub.id)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ delivery_active: 1, failed_since: null, consecutive_failures: 0 });
    expect(row.disabled_at).not.toBeNull();
    await engine.runDue();
    expect(await queued()).toBe(0);
    expect(operator.ofType("endpoint.recovered")).toHaveLength(1);
    // Enabling what is not suspended changes nothing.
    expect(await enableEndpoint(store, sub.id, { clock: clock.now })).toEqual({
      subscriptionId: sub.id,
      resumed: false,
    });
    await expect(enableEndpoint(store, "sub_nosuch", { clock: clock.now })).rejects.toBeInstanceOf(
      DeliveryError,
    );
  });

  it("health counts successes and failures in the current and the previous day, and forgets older ones; successes are counted by the release, no statement of their own", async () => {
    const { clock, engine, db, sub, send } = await eventsSubscription(
      fixture.db,
      endpoint.url,
      "mcp-standard",
    );
    endpoint.control.byEventId = { evt_4: 500 };
    for (let n = 1; n <= 4; n++) await send(n);
    await engine.runDue();
    const read = async () => (await showDelivery(db, sub.id, 20, clock.now())).health;
    expect(await read()).toMatchObject({
      successes: 3,
      failures: 1,
      lastErrorCategory: "http_5xx",
      state: "failing",
    });
    clock.advance(DAY);
    expect(await read()).toMatchObject({ successes: 3, failures: 1 });
    await runAtNextWake(engine, db, clock, sub.id);
    expect((await read()).successes).toBe(3);
    clock.advance(2 * DAY);
    expect(await read()).toMatchObject({ successes: 0, failures: 0 });
    expect((await read()).sinceLastSuccessMs).toBeGreaterThanOrEqual(3 * DAY);
  });

  it("with no operator webhook the events are counted but nothing is queued; configuring none ends the operator subscription", async () => {
    const { clock, engine, db, sub, send, queued } = await eventsSubscription(
      fixture.db,
      endpoint.url,
      "mcp",
    );
    clockNow = clock.now;
    await engine.configureOperatorWebhook({ url: operator.url, secret: operator.secret });
    await engine.configureOperatorWebhook(undefined);
    endpoint.control.status = 500;
    await send(1);
    for (let i = 0; i < 10 && (await queued()) > 0; i++) await runAtNextWake(engine, db, clock, sub.id);
    expect(await queued()).toBe(0);
    expect(operator.events).toHaveLength(0);
    const op = await db
      .selectFrom("delivery_outbox")
      .select("id")
      .where("subscription_id", "=", OPERATOR_SUBSCRIPTION_ID)
      .execute();
    expect(op).toHaveLength(0);
    expect(await engine.metrics.registry.metrics()).toMatch(
      /doorbell_delivery_operator_events_total\{type="delivery.exhausted"\} 1/,
    );
    await expect(
      engine.configureOperatorWebhook({ url: "http://127.0.0.1:1/x", secret: "not-a-secret" }),
    ).rejects.toThrow(/secret/);
  });
});
