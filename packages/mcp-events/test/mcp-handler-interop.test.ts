// The mcp-handler example (Vercel mcp-handler 2.4.0 + SDK v2, with @doorbell/mcp-events/mcp-handler
// as its subscription store and webhook delivery) started as a process, and the clients people
// run against it, each subscribing by webhook to an https receiver on loopback, placing an order
// with the `place_order` tool and receiving `order.placed` once: the AI SDK's `experimental_events`
// with its own receiver, the replayed ChatGPT request shapes with a strict Standard Webhooks
// receiver, and Doorbell's EventsClient. Then what each is refused, and why.
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import os from "node:os";
import path from "node:path";
import {
  experimental_createMCPClient as createMCPClient,
  experimental_createMCPEventWebhook as createMCPEventWebhook,
  type Experimental_MCPEvent,
} from "@ai-sdk/mcp";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { EventsClient } from "../src/client/index.js";
import { take, until } from "./client-harness.js";
import { type Json, MemoryEventStore } from "./interop-harness.js";
import {
  AUTH,
  type ExampleProcess,
  eventsRequest,
  LOOPBACK_CA,
  placeOrder,
  serveHttps,
  serveHttpsNode,
  startExampleProcess,
} from "./mcp-handler-harness.js";

const open: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close().catch(() => undefined);
});

const dirs: string[] = [];
let loopback: ExampleProcess;
let strict: ExampleProcess;

beforeAll(async () => {
  const dir = (name: string) => {
    const made = fs.mkdtempSync(path.join(os.tmpdir(), `doorbell-mcp-handler-${name}-`));
    dirs.push(made);
    return made;
  };
  // One started for local development (loopback callbacks, the test certificate trusted), one
  // as deployed (production egress policy).
  [loopback, strict] = await Promise.all([
    startExampleProcess(["--allow-loopback-webhooks", "--webhook-ca", LOOPBACK_CA, "--data-dir", dir("dev")]),
    startExampleProcess(["--webhook-ca", LOOPBACK_CA, "--data-dir", dir("prod")]),
  ]);
});

afterAll(async () => {
  await Promise.all([loopback?.stop(), strict?.stop()]);
  for (const made of dirs) fs.rmSync(made, { recursive: true, force: true });
});

const whsec = (bytes: number) => `whsec_${randomBytes(bytes).toString("base64")}`;
const settle = () => new Promise((resolve) => setTimeout(resolve, 750));

describe("the AI SDK's experimental_events against the mcp-handler example", () => {
  it("subscribes by webhook, receives order.placed once with its own receiver, refreshes and unsubscribes", async () => {
    const store = new MemoryEventStore();
    const events: Experimental_MCPEvent[] = [];
    const receiver = createMCPEventWebhook({
      store,
      onEvent: async ({ event }) => {
        events.push(event);
      },
    });
    const hooks = await serveHttps(receiver);
    open.push(hooks.close);
    const client = await createMCPClient({
      transport: { type: "http", url: loopback.url, headers: AUTH },
      experimental_events: { store },
    });
    open.push(() => client.close());

    const listed = await client.experimental_events.list();
    expect(listed.events.find((e) => e.name === "order.placed")?.delivery).toEqual(["webhook"]);
    const subscribed = await client.experimental_events.subscribe({
      name: "order.placed",
      arguments: {},
      delivery: { mode: "webhook", url: `${hooks.url}/hooks` },
    });
    expect(subscribed.id).toMatch(/^sub_/);
    expect(subscribed.truncated).toBe(false);
    expect(Date.parse(subscribed.refreshBefore ?? "")).toBeGreaterThan(Date.now());

    const first = await placeOrder(loopback.url, "ada", "kettle");
    await until(() => events.length === 1);
    expect(events[0]).toMatchObject({
      eventId: first,
      name: "order.placed",
      data: { orderId: first, customer: "ada", item: "kettle" },
    });

    const refreshed = await client.experimental_events.refresh({ id: subscribed.id });
    expect(refreshed.id).toBe(subscribed.id);
    const second = await placeOrder(loopback.url, "bob", "teapot");
    await until(() => events.length === 2);
    expect(events[1]?.eventId).toBe(second);

    await client.experimental_events.unsubscribe({ id: subscribed.id });
    expect(store.byKey.size).toBe(0);
    await placeOrder(loopback.url, "ada", "after");
    await settle();
    expect(events.map((e) => e.eventId)).toEqual([first, second]);
  });
});

interface Received {
  url: string;
  headers: Record<string, string>;
  body: Json;
}

/** A receiver that refuses anything ChatGPT's would; every delivery is checked, every refusal kept. */
async function strictReceiver(secret: () => string | undefined) {
  const received: Received[] = [];
  const refusals: string[] = [];
  const hooks = await serveHttps(async (request) => {
    const text = await request.text();
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => {
      headers[name] = value;
    });
    const refuse = (why: string, status = 400) => {
      refusals.push(why);
      return new Response(null, { status });
    };
    if (request.method !== "POST") return refuse("method", 405);
    if (headers["content-type"]?.split(";")[0] !== "application/json") return refuse("content-type", 415);
    const key = secret();
    if (key === undefined) return refuse("not ready", 503);
    try {
      new Webhook(key).verify(text, headers);
    } catch {
      return refuse("signature", 401);
    }
    const body = JSON.parse(text) as Json;
    if (!headers["x-mcp-subscription-id"]) return refuse("subscription id header");
    if (body.type === "verification") return Response.json({ challenge: body.challenge });
    if (body.eventId !== headers["webhook-id"]) return refuse("webhook-id != eventId");
    received.push({ url: request.url, headers, body });
    return new Response(null, { status: 204 });
  });
  open.push(hooks.close);
  return { received, refusals, url: hooks.url };
}

describe("the ChatGPT profile's request shapes against the mcp-handler example", () => {
  it("subscribes with its own secret and routed callback, gets one signed event at that exact URL, refreshes, unsubscribes", async () => {
    const secret = whsec(32);
    const hooks = await strictReceiver(() => secret);
    const callback = `${hooks.url}/mcp/events?conversation=c_1&sig=a%2Bb`;
    const params = {
      name: "order.placed",
      arguments: { customer: "ada" },
      delivery: { mode: "webhook", url: callback, secret },
      ttlMs: 600_000,
    };
    const subscribed = (await eventsRequest(loopback.url, "events/subscribe", params)).result as Json;
    expect(subscribed).toMatchObject({ truncated: false, deliveryStatus: { active: true, lastError: null } });
    expect(subscribed.id).toMatch(/^sub_/);
    expect(Date.parse(subscribed.refreshBefore as string)).toBeLessThanOrEqual(Date.now() + 600_000);

    // Bob's order does not match the subscription's arguments; Ada's does.
    await placeOrder(loopback.url, "bob", "chair");
    const ada = await placeOrder(loopback.url, "ada", "lamp");
    await until(() => hooks.received.length === 1);
    const [delivery] = hooks.received;
    expect(delivery?.url).toBe(callback);
    expect(delivery?.headers["webhook-id"]).toBe(ada);
    expect(delivery?.headers["x-mcp-subscription-id"]).toBe(subscribed.id);
    expect(delivery?.body).toMatchObject({ eventId: ada, name: "order.placed", data: { item: "lamp" } });

    // Subscribing again with the same key is a refresh of the same subscription.
    const again = (await eventsRequest(loopback.url, "events/subscribe", params)).result as Json;
    expect(again.id).toBe(subscribed.id);
    const next = await placeOrder(loopback.url, "ada", "desk");
    await until(() => hooks.received.length === 2);
    expect(hooks.received[1]?.body.eventId).toBe(next);
    await settle();
    expect(hooks.received).toHaveLength(2);
    expect(hooks.refusals).toEqual([]);

    const unsubscribe = { name: "order.placed", arguments: { customer: "ada" }, delivery: { url: callback } };
    expect((await eventsRequest(loopback.url, "events/unsubscribe", unsubscribe)).result).toBeDefined();
    expect((await eventsRequest(loopback.url, "events/unsubscribe", unsubscribe)).error).toMatchObject({
      code: -32011,
      data: { kind: "subscription" },
    });
    await placeOrder(loopback.url, "ada", "after");
    await settle();
    expect(hooks.received).toHaveLength(2);
  });
});

describe("Doorbell's EventsClient against the mcp-handler example", () => {
  it("picks webhook mode, answers the challenge, receives order.placed once", async () => {
    let node: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
    const hooks = await serveHttpsNode((req, res) => {
      if (node) node(req, res);
      else res.writeHead(503).end();
    });
    open.push(hooks.close);
    const events = new EventsClient({
      connect: async () => {
        const client = new Client(
          { name: "events-client-test", version: "1.0.0" },
          { versionNegotiation: { mode: "auto" } },
        );
        await client.connect(
          new StreamableHTTPClientTransport(new URL(loopback.url), { requestInit: { headers: AUTH } }),
        );
        return client;
      },
      webhook: { url: `${hooks.url}/hooks` },
    });
    open.push(() => events.close());
    node = events.receiver?.node;
    const sub = await events.subscribe("order.placed");
    expect(sub.mode).toBe("webhook");
    const order = await placeOrder(loopback.url, "cy", "mug");
    const [got] = await take(sub, 1);
    expect(got).toMatchObject({ eventId: order, data: { orderId: order, customer: "cy", item: "mug" } });
  });
});

describe("what the mcp-handler example refuses", () => {
  const subscribe = (url: string, callback: string, secret: string, headers: Record<string, string> = AUTH) =>
    eventsRequest(
      url,
      "events/subscribe",
      { name: "order.placed", arguments: {}, delivery: { mode: "webhook", url: callback, secret } },
      headers,
    );

  it("a callback that is not https, a bad secret, no token, an endpoint that fails the challenge", async () => {
    const hooks = await strictReceiver(() => undefined);
    // mcp-handler takes https callbacks only, whatever the egress policy would allow.
    expect((await subscribe(loopback.url, "http://127.0.0.1:9/hooks", whsec(32))).error).toMatchObject({
      code: -32602,
    });
    expect((await subscribe(loopback.url, `${hooks.url}/h`, whsec(16))).error).toMatchObject({
      code: -32602,
    });
    expect((await subscribe(loopback.url, `${hooks.url}/h`, "not-a-secret")).error).toMatchObject({
      code: -32602,
    });
    expect((await subscribe(loopback.url, `${hooks.url}/h`, whsec(32), {})).error).toMatchObject({
      code: -32012,
    });
    // The receiver answers 503 to the challenge: nothing is activated.
    expect((await subscribe(loopback.url, `${hooks.url}/h`, whsec(32))).error).toMatchObject({
      code: -32015,
      data: { reason: "challenge_failed" },
    });
  });

  it("without --allow-loopback-webhooks an https callback on loopback is never contacted", async () => {
    const secret = whsec(32);
    const hooks = await strictReceiver(() => secret);
    expect((await subscribe(strict.url, `${hooks.url}/h`, secret)).error).toMatchObject({
      code: -32015,
      data: { reason: "connection_refused" },
    });
    expect(hooks.received).toEqual([]);
    expect(hooks.refusals).toEqual([]);
  });
});
