// SDK v2's modern path (createMcpHandler, a fresh McpServer per request): `eventsListChanged` on
// `subscriptions/listen` through withEventsListen, beside the SDK's own change types, and poll
// answered in SEP-3415 with resultType.
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod/v4";
import { createEventsServer, type EventsServer, withEventsListen } from "../src/index.js";
import { type Json, modernRequest, serveFetch } from "./interop-harness.js";

const open: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close().catch(() => undefined);
});

async function modern(): Promise<{ events: EventsServer; url: string; notify: { toolsChanged(): void } }> {
  const events = await createEventsServer({ nextPollMs: 1_000 });
  events.event({ name: "ping.sent", payloadSchema: { type: "object" } });
  const handler = createMcpHandler(() => {
    const server = new McpServer({ name: "modern", version: "1.0.0" });
    events.attach(server);
    server.registerTool("noop", { inputSchema: z.object({}) }, () => ({ content: [] }));
    return server;
  });
  const wrapped = withEventsListen(handler, events);
  const http = await serveFetch((request) => wrapped.fetch(request));
  open.push(async () => {
    wrapped.close();
    await handler.close();
    await http.close();
    await events.close();
  });
  return { events, url: `${http.url}/mcp`, notify: handler.notify };
}

/** Opens `subscriptions/listen` and yields its SSE messages. */
function listen(url: string, id: number, notifications: Json) {
  return openStream(url, id, "subscriptions/listen", { notifications });
}

/** Opens a long-lived 2026-07-28 request and yields its SSE messages. */
async function openStream(url: string, id: number, method: string, params: Json) {
  const controller = new AbortController();
  open.push(async () => controller.abort());
  const response = await fetch(url, {
    method: "POST",
    signal: controller.signal,
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": method,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id,
      method,
      params: {
        ...params,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {},
        },
      },
    }),
  });
  expect(response.headers.get("content-type")).toContain("text/event-stream");
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  return async function next(): Promise<Json> {
    for (;;) {
      const cut = buffer.indexOf("\n\n");
      if (cut >= 0) {
        const frame = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const data = frame
          .split("\n")
          .filter((line) => line.startsWith("data:"))
          .map((line) => line.slice(5).trimStart())
          .join("\n");
        if (data) return JSON.parse(data) as Json;
        continue;
      }
      const { value, done } = await reader.read();
      if (done) throw new Error("the stream ended");
      buffer += decoder.decode(value, { stream: true });
    }
  };
}

describe("subscriptions/listen with eventsListChanged (SDK v2, modern)", () => {
  it("alone: acknowledged, kept open, and told when the event types change", async () => {
    const { events, url } = await modern();
    const next = await listen(url, 41, { eventsListChanged: true });
    const ack = await next();
    expect(ack).toMatchObject({
      method: "notifications/subscriptions/acknowledged",
      params: {
        notifications: { eventsListChanged: true },
        _meta: { "io.modelcontextprotocol/subscriptionId": 41 },
      },
    });
    events.event({ name: "pong.sent" });
    expect(await next()).toEqual({
      jsonrpc: "2.0",
      method: "notifications/events/list_changed",
      params: { _meta: { "io.modelcontextprotocol/subscriptionId": 41 } },
    });
  });

  it("beside the SDK's own types: both are honoured on one stream", async () => {
    const { events, url, notify } = await modern();
    const next = await listen(url, 42, { eventsListChanged: true, toolsListChanged: true });
    expect((await next()).params).toMatchObject({
      notifications: { eventsListChanged: true, toolsListChanged: true },
    });
    notify.toolsChanged();
    expect(await next()).toMatchObject({ method: "notifications/tools/list_changed" });
    await events.removeEvent("ping.sent");
    expect(await next()).toMatchObject({ method: "notifications/events/list_changed" });
  });

  it("without eventsListChanged the SDK answers alone (no list_changed for events)", async () => {
    const { events, url, notify } = await modern();
    const next = await listen(url, 43, { toolsListChanged: true });
    expect((await next()).params).toEqual({
      notifications: { toolsListChanged: true },
      _meta: { "io.modelcontextprotocol/subscriptionId": 43 },
    });
    events.event({ name: "unheard" });
    notify.toolsChanged();
    expect(await next()).toMatchObject({ method: "notifications/tools/list_changed" });
  });
});

describe("poll on the modern path", () => {
  it("answers SEP-3415 (arguments, nextPollMs, truncated, resultType) whatever the server's default dialect", async () => {
    const { events, url } = await modern();
    const first = await modernRequest(url, 1, "events/poll", {
      name: "ping.sent",
      arguments: {},
      cursor: null,
    });
    const result = first.message.result as Json;
    expect(result).toMatchObject({ events: [], hasMore: false, truncated: false, nextPollMs: 1_000 });
    expect(result.resultType).toBe("complete");
    events.emit("ping.sent", { eventId: "p1", data: { n: 1 } });
    const second = await modernRequest(url, 2, "events/poll", {
      name: "ping.sent",
      arguments: {},
      cursor: result.cursor,
    });
    expect((second.message.result as { events: Json[] }).events).toMatchObject([
      { eventId: "p1", data: { n: 1 } },
    ]);
    // An unknown event is NotFound in SEP-3415's codes.
    const missing = await modernRequest(url, 3, "events/poll", { name: "nope", arguments: {} });
    expect(missing.message.error).toMatchObject({ code: -32011, message: "NotFound" });
  });
});

describe("push on the modern path", () => {
  it("events/stream: active first, then each emit, routed by _meta subscriptionId", async () => {
    const { events, url } = await modern();
    const next = await openStream(url, 51, "events/stream", {
      name: "ping.sent",
      arguments: {},
      cursor: null,
    });
    const meta = { "io.modelcontextprotocol/subscriptionId": 51 };
    expect(await next()).toMatchObject({
      method: "notifications/events/active",
      params: { truncated: false, _meta: meta },
    });
    events.emit("ping.sent", { eventId: "p_live", data: { n: 2 } });
    expect(await next()).toMatchObject({
      method: "notifications/events/event",
      params: { eventId: "p_live", name: "ping.sent", data: { n: 2 }, _meta: meta },
    });
  });
});
