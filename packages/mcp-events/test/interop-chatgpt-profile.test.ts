// ChatGPT cannot be driven from a test, so this replays the request shapes it is reported to
// send (shared/reference/mcp-2026-07-28-and-events.md §4.1) against the modern endpoint of the
// check-function example, with a strict receiver: Standard Webhooks verified by an independent
// library (`standardwebhooks`), webhook-id = eventId, X-MCP-Subscription-Id = the subscription
// id, the POST to the callback URL exactly as given, one event per request, ≤ 256 KiB.
import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it } from "vitest";
import {
  createExampleApp,
  type ExampleApp,
  listenExample,
} from "../../../examples/events-check-function/server.js";
import { type Json, modernRequest, QUICK_RETRY, serveFetch, until } from "./interop-harness.js";

const AUTH = { authorization: "Bearer dev-token" };
const open: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close().catch(() => undefined);
});

interface Received {
  url: string;
  headers: Record<string, string>;
  body: Json;
}

/** A receiver that refuses anything ChatGPT's would: every delivery is checked, every refusal kept. */
async function strictReceiver(secret: () => string | undefined) {
  const received: Received[] = [];
  const refusals: string[] = [];
  const hooks = await serveFetch(async (request) => {
    const text = await request.text();
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => {
      headers[name] = value;
    });
    const refuse = (why: string, status = 400) => {
      refusals.push(why);
      return new Response(null, { status });
    };
    // It publishes no receiver document, so the server must challenge it.
    if (
      request.method === "GET" &&
      new URL(request.url).pathname === "/.well-known/mcp-webhook-receiver.json"
    )
      return new Response(null, { status: 404 });
    if (request.method !== "POST") return refuse("method", 405);
    if (headers["content-type"]?.split(";")[0] !== "application/json") return refuse("content-type", 415);
    if (Buffer.byteLength(text) > 256 * 1024) return refuse("size", 413);
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
    if (body.type === undefined && body.eventId !== headers["webhook-id"])
      return refuse("webhook-id != eventId");
    received.push({ url: request.url, headers, body });
    return new Response(null, { status: 204 });
  });
  open.push(hooks.close);
  return { received, refusals, url: hooks.url };
}

async function modernApp(): Promise<{ app: ExampleApp; url: string }> {
  const app = await createExampleApp({
    allowLoopbackWebhooks: true,
    tuning: { pushIntervalMs: 60_000, webhook: { retry: QUICK_RETRY } },
  });
  const { url, server } = await listenExample(app);
  open.push(async () => {
    server.closeAllConnections();
    server.close();
    await app.close();
  });
  return { app, url };
}

const whsec = (bytes: number) => `whsec_${randomBytes(bytes).toString("base64")}`;

describe("a ChatGPT-profile client on the modern endpoint", () => {
  it("discovers events top-level and as the extension, subscribes, gets signed events at its exact URL, unsubscribes", async () => {
    const { app, url } = await modernApp();
    const secret = whsec(32);
    const hooks = await strictReceiver(() => secret);

    const discover = await modernRequest(url, 1, "server/discover", {}, AUTH);
    const capabilities = (discover.message.result as Json).capabilities as Json;
    expect(capabilities.events).toEqual({ listChanged: true });
    expect((capabilities.extensions as Json)["io.modelcontextprotocol/events"]).toEqual({
      listChanged: true,
    });

    const list = await modernRequest(url, 2, "events/list", {}, AUTH);
    expect((list.message.result as Json).resultType).toBe("complete");

    // ChatGPT's callback carries its own routing query; it must come back exactly so.
    const callback = `${hooks.url}/mcp/events?conversation=c_1&sig=a%2Bb`;
    const subscribe = await modernRequest(
      url,
      3,
      "events/subscribe",
      {
        name: "order.placed",
        arguments: {},
        delivery: { mode: "webhook", url: callback, secret },
        ttlMs: 600_000,
      },
      AUTH,
    );
    const result = subscribe.message.result as Json;
    expect(result).toMatchObject({ resultType: "complete", truncated: false });
    expect(typeof result.id).toBe("string");
    expect(typeof result.cursor).toBe("string");
    expect(Date.parse(result.refreshBefore as string)).toBeLessThanOrEqual(Date.now() + 600_000);

    app.book.place("ada", "lamp");
    app.events.wake("order.placed");
    await until(() => hooks.received.length === 1);
    const [delivery] = hooks.received;
    expect(delivery?.url).toBe(callback);
    expect(delivery?.headers["webhook-id"]).toBe("order_1");
    expect(delivery?.headers["x-mcp-subscription-id"]).toBe(result.id);
    expect(delivery?.body).toMatchObject({
      eventId: "order_1",
      name: "order.placed",
      data: { item: "lamp" },
    });
    expect(hooks.refusals).toEqual([]);

    const unsubscribe = await modernRequest(
      url,
      4,
      "events/unsubscribe",
      { name: "order.placed", arguments: {}, delivery: { url: callback } },
      AUTH,
    );
    expect(unsubscribe.message.result).toMatchObject({ resultType: "complete" });
    expect(await app.events.countSubscriptions()).toBe(0);
  });

  it("the same (principal, url, name, arguments) is one subscription: subscribing again refreshes it", async () => {
    const { app, url } = await modernApp();
    const secret = whsec(32);
    const hooks = await strictReceiver(() => secret);
    const params = (s: string) => ({
      name: "order.placed",
      arguments: { customer: "ada" },
      delivery: { mode: "webhook", url: `${hooks.url}/h`, secret: s },
    });
    const first = (await modernRequest(url, 1, "events/subscribe", params(secret), AUTH)).message
      .result as Json;
    const again = (await modernRequest(url, 2, "events/subscribe", params(secret), AUTH)).message
      .result as Json;
    expect(again.id).toBe(first.id);
    expect(await app.events.countSubscriptions()).toBe(1);
    const other = (
      await modernRequest(
        url,
        3,
        "events/subscribe",
        { ...params(secret), arguments: { customer: "bob" } },
        AUTH,
      )
    ).message.result as Json;
    expect(other.id).not.toBe(first.id);
  });

  it("refuses what ChatGPT's profile refuses, with the codes it reads", async () => {
    const { url } = await modernApp();
    const hooks = await strictReceiver(() => undefined);
    const attempt = (secret: string, headers: Record<string, string> = AUTH) =>
      modernRequest(
        url,
        9,
        "events/subscribe",
        { name: "order.placed", arguments: {}, delivery: { mode: "webhook", url: `${hooks.url}/h`, secret } },
        headers,
      );
    // A secret outside 24..64 bytes is InvalidParams.
    expect((await attempt(whsec(16))).message.error).toMatchObject({ code: -32602 });
    expect((await attempt(whsec(65))).message.error).toMatchObject({ code: -32602 });
    // No authenticated principal: Forbidden.
    expect((await attempt(whsec(32), {})).message.error).toMatchObject({
      code: -32012,
      message: "Forbidden",
    });
    // An endpoint that cannot answer the challenge: CallbackEndpointError with a reason.
    const failed = (await attempt(whsec(32))).message.error as Json;
    expect(failed).toMatchObject({ code: -32015, data: { reason: "challenge_failed" } });
    // An unknown event: NotFound.
    const unknown = await modernRequest(
      url,
      10,
      "events/subscribe",
      {
        name: "nope",
        arguments: {},
        delivery: { mode: "webhook", url: `${hooks.url}/h`, secret: whsec(32) },
      },
      AUTH,
    );
    expect(unknown.message.error).toMatchObject({ code: -32011 });
  }, 30_000);
});

/** One 2025-11-25 request (no `_meta` envelope), as an `initialize`-era client writes it. */
async function legacyRequest(
  url: string,
  id: number,
  method: string,
  params: Json,
  headers: Record<string, string> = AUTH,
) {
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-11-25",
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: "2.0", id, method, params }),
  });
  const text = await response.text();
  const data = text.startsWith("{")
    ? text
    : text
        .split("\n")
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5).trimStart())
        .join("");
  return JSON.parse(data) as Json;
}

describe("a ChatGPT-profile client in the 2025-11-25 era (initialize, the stateless fallback)", () => {
  it("initialize shows events top-level; subscribe and delivery work the same", async () => {
    const { app, url } = await modernApp();
    const secret = whsec(32);
    const hooks = await strictReceiver(() => secret);
    const init = await legacyRequest(url, 1, "initialize", {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "chatgpt-profile", version: "1" },
    });
    const capabilities = (init.result as Json).capabilities as Json;
    expect(capabilities.events).toEqual({ listChanged: true });
    const callback = `${hooks.url}/hooks?c=1`;
    const subscribed = await legacyRequest(url, 2, "events/subscribe", {
      name: "order.placed",
      arguments: {},
      delivery: { mode: "webhook", url: callback, secret },
    });
    expect(subscribed.result).toMatchObject({ truncated: false, cursor: "0" });
    app.book.place("ada", "chair");
    app.events.wake("order.placed");
    await until(() => hooks.received.length === 1);
    expect(hooks.received[0]?.url).toBe(callback);
    expect(hooks.received[0]?.headers["webhook-id"]).toBe("order_1");
    const anonymous = await legacyRequest(
      url,
      3,
      "events/subscribe",
      { name: "order.placed", arguments: {}, delivery: { mode: "webhook", url: callback, secret } },
      {},
    );
    expect(anonymous.error).toMatchObject({ code: -32012 });
  });
});

describe("maxAgeMs on a webhook subscription without a cursor", () => {
  it("replays the kept emits no older than maxAgeMs, then goes on live", async () => {
    let offset = 0;
    const app = await createExampleApp({
      allowLoopbackWebhooks: true,
      tuning: { clock: () => Date.now() + offset, webhook: { retry: QUICK_RETRY } },
    });
    const { url, server } = await listenExample(app);
    open.push(async () => {
      server.closeAllConnections();
      server.close();
      await app.close();
    });
    const secret = whsec(32);
    const hooks = await strictReceiver(() => secret);
    app.events.emit("store.announcement", { eventId: "ann_old", data: { text: "a minute ago" } });
    offset = 60_000;
    app.events.emit("store.announcement", { eventId: "ann_new", data: { text: "just now" } });
    const subscribed = await modernRequest(
      url,
      1,
      "events/subscribe",
      {
        name: "store.announcement",
        arguments: {},
        delivery: { mode: "webhook", url: `${hooks.url}/h`, secret },
        cursor: null,
        maxAgeMs: 30_000,
      },
      AUTH,
    );
    expect(subscribed.message.result).toMatchObject({ truncated: false });
    await until(() => hooks.received.length === 1);
    app.events.emit("store.announcement", { eventId: "ann_live", data: { text: "live" } });
    await until(() => hooks.received.length === 2);
    expect(hooks.received.map((r) => r.body.eventId)).toEqual(["ann_new", "ann_live"]);
  });
});
