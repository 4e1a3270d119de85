// Issue 15, item 3: what an outbox refuses never crashes the process or stalls a cursor, and a
// dropped connection stops a stream on the Node transport and on SDK v2's modern path.
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { createReceiver, developmentPolicy, generateSecret, type ReceivedWebhook } from "@doorbell/webhooks";
import { getRequestListener } from "@hono/node-server";
import { McpServer as V1McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createEventsServer, type EventsServer, handleEventsNodeRequest } from "../src/index.js";
import { emailReceived, newHooks } from "./fixtures.js";
import { type Json, type Listening, listen, RawSession, serveEvents, until } from "./harness.js";
import { modernRequest, serveFetch } from "./interop-harness.js";

let events: EventsServer;
let http: Listening;
let hook: Listening;
let received: ReceivedWebhook[];
const upstream: { eventId: string; data: Json }[] = [];
const secret = generateSecret();
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);

beforeEach(async () => {
  received = [];
  upstream.length = 0;
  unhandled.length = 0;
  process.on("unhandledRejection", onUnhandled);
  const receiver = createReceiver({
    scheme: "standard",
    keys: { secrets: [secret] },
    onChallenge: () => true,
    handler: (webhook) => {
      received.push(webhook);
    },
  });
  hook = await listen(createServer(getRequestListener(receiver)));
  events = await createEventsServer({
    pushIntervalMs: 50,
    webhook: { policy: developmentPolicy(), verifyTimeoutMs: 3_000, allowAnonymous: true },
  });
  events.event(emailReceived(newHooks()));
  // A check function over an upstream list whose positions are indexes.
  events.event({
    name: "log.line",
    check: (_ctx, _params, cursor) => {
      if (cursor === null) return { events: [], cursor: String(upstream.length) };
      const from = Number(cursor);
      return { events: upstream.slice(from), cursor: String(upstream.length) };
    },
  });
  http = await serveEvents(events);
});
afterEach(async () => {
  process.off("unhandledRejection", onUnhandled);
  await http.close();
  await events.close();
  await hook.close();
});

async function subscribe(name: string): Promise<Json> {
  const session = await RawSession.open(http.url);
  const answer = await session.request(2, "events/subscribe", {
    name,
    arguments: {},
    delivery: { mode: "webhook", url: `${hook.url}/hooks/agent`, secret },
  });
  expect(answer.error).toBeUndefined();
  return answer.result as Json;
}

const data = { messageId: "m", from: "a@example.com", subject: "s", receivedAt: "2026-02-19T15:29:58Z" };

describe("an emit the outbox would refuse", () => {
  it("throws InvalidParams at the emitter, keeps nothing, rejects nothing unhandled; the next emit is delivered", async () => {
    await subscribe("email.received");
    expect(() => events.emit("email.received", { eventId: "évé_1", data })).toThrow(
      expect.objectContaining({ kind: "InvalidParams", data: { field: "eventId" } }),
    );
    const huge = { ...data, subject: "x".repeat(300 * 1024) };
    expect(() => events.emit("email.received", { eventId: "evt_big", data: huge })).toThrow(
      expect.objectContaining({ kind: "InvalidParams", data: { field: "data", limit: 256 * 1024 } }),
    );
    events.emit("email.received", { eventId: "evt_ok", data });
    await until(() => received.length === 1);
    expect(received.map((r) => r.id)).toEqual(["evt_ok"]);
    // Poll never shows what was refused either.
    const session = await RawSession.open(http.url);
    const poll = await session.request(3, "events/poll", {
      name: "email.received",
      arguments: {},
      cursor: "x.0",
    });
    expect(JSON.stringify(poll)).not.toContain("evt_big");
    expect(unhandled).toEqual([]);
  });
});

describe("the check-function path", () => {
  it("skips an event no webhook can carry and moves its cursor on, so later events still arrive", async () => {
    await subscribe("log.line");
    upstream.push({ eventId: "line_é", data: { text: "non-ASCII id" } });
    upstream.push({ eventId: "line_big", data: { text: "y".repeat(300 * 1024) } });
    upstream.push({ eventId: "line_3", data: { text: "fine" } });
    events.wake("log.line");
    await until(() => received.length === 1);
    expect(received[0]?.id).toBe("line_3");
    upstream.push({ eventId: "line_4", data: { text: "still flowing" } });
    events.wake("log.line");
    await until(() => received.length === 2);
    expect(received[1]?.id).toBe("line_4");
    expect(unhandled).toEqual([]);
  });
});

describe("a dropped connection stops the stream", () => {
  it("on SDK 1.x's Node transport (handleEventsNodeRequest)", async () => {
    const sessions = new Map<string, StreamableHTTPServerTransport>();
    const node = await listen(
      createServer(async (req, res) => {
        const id = req.headers["mcp-session-id"];
        let transport = typeof id === "string" ? sessions.get(id) : undefined;
        if (!transport) {
          const fresh = new StreamableHTTPServerTransport({
            sessionIdGenerator: randomUUID,
            onsessioninitialized: (sid) => {
              sessions.set(sid, fresh);
            },
          });
          const server = new V1McpServer({ name: "node-transport", version: "1.0.0" });
          events.attach(server);
          await server.connect(fresh);
          transport = fresh;
        }
        await handleEventsNodeRequest(events, transport, req, res);
      }),
    );
    try {
      const session = await RawSession.open(node.url);
      const stream = session.open(7, "events/stream", { name: "email.received", arguments: {} });
      await stream.messages.next();
      expect(events.liveSubscriptions).toBe(1);
      stream.abort();
      await until(() => events.liveSubscriptions === 0);
    } finally {
      await node.close();
    }
  });

  it("on SDK 2.x's modern path (createMcpHandler): the request's signal ends it", async () => {
    const handler = createMcpHandler(() => {
      const server = new McpServer({ name: "v2", version: "1.0.0" });
      events.attach(server);
      return server;
    });
    const v2 = await serveFetch((request) => handler.fetch(request));
    try {
      const controller = new AbortController();
      const opened = modernRequest(
        `${v2.url}/mcp`,
        8,
        "events/stream",
        { name: "email.received", arguments: {} },
        {},
        controller.signal,
      ).catch(() => undefined);
      await until(() => events.liveSubscriptions === 1);
      controller.abort();
      await opened;
      await until(() => events.liveSubscriptions === 0);
    } finally {
      await handler.close();
      await v2.close();
    }
  });
});
