// Two processes of the mcp-handler example on one PostgreSQL, behind a round-robin proxy (no
// stickiness, like a balancer): a subscription made through one instance is the same subscription
// through the other (refreshed, fed and ended by either), and an order placed through either
// instance, or through the proxy, reaches the receiver once.
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {
  experimental_createMCPClient as createMCPClient,
  experimental_createMCPEventWebhook as createMCPEventWebhook,
  type Experimental_MCPEvent,
} from "@ai-sdk/mcp";
import { formatKeyring, generateKeyEntry } from "@doorbell/store";
import { type TestDatabase, testEngines } from "@doorbell/store/testing";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RoundRobinProxy, startRoundRobinProxy } from "../../cli/test/round-robin-proxy.js";
import { type Json, MemoryEventStore, until } from "./interop-harness.js";
import {
  AUTH,
  type ExampleProcess,
  eventsRequest,
  LOOPBACK_CA,
  placeOrder,
  serveHttps,
  startExampleProcess,
} from "./mcp-handler-harness.js";

const postgres = testEngines().find((engine) => engine.dialect === "postgres");
const suite = postgres?.skipReason === undefined ? describe : describe.skip;

suite("two mcp-handler example instances on one PostgreSQL", () => {
  let database: TestDatabase;
  let instances: ExampleProcess[] = [];
  let proxy: RoundRobinProxy;
  let dataDir: string;
  const secret = `whsec_${randomBytes(32).toString("base64")}`;
  const received: Json[] = [];
  let receiver: { url: string; close(): Promise<void> };

  beforeAll(async () => {
    database = await (postgres as NonNullable<typeof postgres>).createDatabase();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-mcp-handler-pg-"));
    // Both instances open each other's sealed secrets: the same keys, as an operator gives them.
    const env = { DOORBELL_SEAL_KEYS: formatKeyring([generateKeyEntry()]) };
    const args = ["--database", database.url, "--allow-loopback-webhooks", "--webhook-ca", LOOPBACK_CA];
    instances = await Promise.all([
      startExampleProcess([...args, "--data-dir", path.join(dataDir, "a")], env),
      startExampleProcess([...args, "--data-dir", path.join(dataDir, "b")], env),
    ]);
    proxy = await startRoundRobinProxy(instances.map((instance) => new URL(instance.url).origin));
    receiver = await serveHttps(async (request) => {
      const text = await request.text();
      const headers: Record<string, string> = {};
      request.headers.forEach((value, name) => {
        headers[name] = value;
      });
      try {
        new Webhook(secret).verify(text, headers);
      } catch {
        return new Response(null, { status: 401 });
      }
      const body = JSON.parse(text) as Json;
      if (body.type === "verification") return Response.json({ challenge: body.challenge });
      received.push(body);
      return new Response(null, { status: 204 });
    });
  });

  afterAll(async () => {
    await receiver?.close();
    await proxy?.close();
    await Promise.all(instances.map((instance) => instance.stop()));
    await postgres?.cleanup();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it("subscribe through one, refresh and unsubscribe through the other; every order arrives once", async () => {
    const [a, b] = instances as [ExampleProcess, ExampleProcess];
    const through = `${proxy.url}/mcp`;
    const callback = `${receiver.url}/hooks`;
    const params = {
      name: "order.placed",
      arguments: {},
      delivery: { mode: "webhook", url: callback, secret },
    };

    const made = (await eventsRequest(a.url, "events/subscribe", params)).result as Json;
    expect(made.id).toMatch(/^sub_/);
    const refreshed = (await eventsRequest(b.url, "events/subscribe", params)).result as Json;
    expect(refreshed.id).toBe(made.id);
    expect(refreshed.deliveryStatus).toMatchObject({ active: true, lastError: null });

    const orders = [
      await placeOrder(a.url, "ada", "one"),
      await placeOrder(b.url, "bob", "two"),
      await placeOrder(through, "cy", "three"),
      await placeOrder(through, "di", "four"),
    ];
    await until(() => received.length >= orders.length);
    await new Promise((resolve) => setTimeout(resolve, 750));
    expect(received.map((body) => body.eventId).sort()).toEqual([...orders].sort());
    // The proxy sent one of its two orders to each instance.
    expect(proxy.answered.every((count) => count > 0)).toBe(true);

    expect(
      (await eventsRequest(b.url, "events/unsubscribe", { ...params, delivery: { url: callback } })).result,
    ).toBeDefined();
    expect(
      (await eventsRequest(a.url, "events/unsubscribe", { ...params, delivery: { url: callback } })).error,
    ).toMatchObject({ code: -32011 });
    await placeOrder(a.url, "ada", "after");
    await new Promise((resolve) => setTimeout(resolve, 750));
    expect(received).toHaveLength(orders.length);
  });

  it("the AI SDK through the proxy: each request may reach either instance, the subscription is one", async () => {
    const store = new MemoryEventStore();
    const events: Experimental_MCPEvent[] = [];
    const hooks = await serveHttps(
      createMCPEventWebhook({
        store,
        onEvent: async ({ event }) => {
          events.push(event);
        },
      }),
    );
    const through = `${proxy.url}/mcp`;
    const client = await createMCPClient({
      transport: { type: "http", url: through, headers: AUTH },
      experimental_events: { store },
    });
    try {
      const before = [...proxy.answered];
      const subscribed = await client.experimental_events.subscribe({
        name: "order.placed",
        arguments: { customer: "eve" },
        delivery: { mode: "webhook", url: `${hooks.url}/ai` },
      });
      const refreshed = await client.experimental_events.refresh({ id: subscribed.id });
      expect(refreshed.id).toBe(subscribed.id);
      // Round robin: the requests so far went to both instances.
      expect(proxy.answered.every((count, i) => count > (before[i] ?? 0))).toBe(true);
      const order = await placeOrder(through, "eve", "five");
      await placeOrder(through, "eve", "six");
      await until(() => events.length === 2);
      await new Promise((resolve) => setTimeout(resolve, 750));
      expect(events).toHaveLength(2);
      expect(events[0]?.eventId).toBe(order);
      await client.experimental_events.unsubscribe({ id: subscribed.id });
      await placeOrder(through, "eve", "after");
      await new Promise((resolve) => setTimeout(resolve, 750));
      expect(events).toHaveLength(2);
    } finally {
      await client.close();
      await hooks.close();
    }
  });
});
