// The EventsClient against an independent Events server: written here by hand on node:http, with
// JSON-RPC, SSE and Standard Webhooks signatures done without any of this project's code. On
// 2026-07-28 (`server/discover`) it speaks SEP-3415; told to, it is a 2025-11-25 server instead
// (MethodNotFound to `server/discover`, then `initialize`) that answers in whichever dialect each
// request is written. It records every request, so the tests read what the client put on the wire.
// It sends what SEP-3415 allows and this project's own server never does: events whose cursor is
// null or absent (event types without replay), positions without a cursor, and refusals that
// carry the server's own reason.
import { createHmac } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterEach, describe, expect, it } from "vitest";
import { EventsClient, type EventsClientOptions, type SubscriptionNotice } from "../src/client/index.js";
import { startReceiverServer, take, until } from "./client-harness.js";

const MODERN = "2026-07-28";
const LEGACY = "2025-11-25";
const EVENT = "ticker.tick";
const SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId";
type Json = Record<string, unknown>;

const open: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close().catch(() => undefined);
});

/** One request the server was sent. */
interface Received {
  method: string;
  params: Json;
}

/** An `events/stream` the server holds open: the test writes its notifications. */
interface OpenStream {
  params: Json;
  /** Sends a notification routed to this stream (SEP-3415 `_meta`, or the sketch's `requestId`). */
  notify(method: string, params: Json): void;
  /** Ends the stream with its final result. */
  end(): void;
}

/** How the server answers the calls a test scripts: a result, or a JSON-RPC error. */
type Answer = { result: Json } | { error: { code: number; message: string; data?: unknown } };

interface RawServerOptions {
  era?: "modern" | "legacy";
  /** Each poll's answer, in order (the last repeats). */
  polls?: readonly Answer[];
  /** The answer to events/subscribe; deliveries are posted after it by `deliver`. */
  subscribe?: Answer;
  /** The answer to events/list (default: one event type offering every mode). */
  list?: Answer;
  /** An answer to every events/stream instead of opening one. */
  stream?: Answer;
}

async function startRawServer(options: RawServerOptions = {}) {
  const era = options.era ?? "modern";
  const received: Received[] = [];
  const streams: OpenStream[] = [];
  let polls = 0;
  let subscribed: { url: string; secret: string } | undefined;

  const reply = (res: ServerResponse, id: unknown, answer: Answer, modern: boolean) => {
    const body =
      "result" in answer
        ? {
            jsonrpc: "2.0",
            id,
            result: modern ? { resultType: "complete", ...answer.result } : answer.result,
          }
        : { jsonrpc: "2.0", id, error: answer.error };
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
  };

  const http = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== "POST") {
      res.writeHead(405).end();
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const message = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
      id?: string | number;
      method: string;
      params?: Json;
    };
    if (message.id === undefined) {
      res.writeHead(202).end();
      return;
    }
    const { _meta: _ignored, ...params } = message.params ?? {};
    received.push({ method: message.method, params });
    // A request in SEP-3415's words (`arguments`, on any era) is answered in SEP-3415's shapes.
    const sep = "arguments" in params || (era === "modern" && !("params" in params));
    switch (message.method) {
      case "server/discover":
        if (era === "legacy") return reply(res, message.id, notFound(message.method), false);
        return reply(
          res,
          message.id,
          {
            result: {
              supportedVersions: [MODERN],
              capabilities: { extensions: { "io.modelcontextprotocol/events": {} } },
              ttlMs: 0,
              cacheScope: "private",
              _meta: { "io.modelcontextprotocol/serverInfo": { name: "raw-events", version: "1.0.0" } },
            },
          },
          true,
        );
      case "initialize":
        if (era === "modern") return reply(res, message.id, notFound(message.method), false);
        return reply(
          res,
          message.id,
          {
            result: {
              protocolVersion: LEGACY,
              capabilities: { events: {} },
              serverInfo: { name: "raw-events", version: "1.0.0" },
            },
          },
          false,
        );
      case "events/list":
        return reply(
          res,
          message.id,
          options.list ?? {
            result: {
              events: [
                {
                  name: EVENT,
                  description: "A tick without replay",
                  delivery: ["poll", "push", "webhook"],
                  inputSchema: { type: "object" },
                },
              ],
            },
          },
          era === "modern",
        );
      case "events/poll": {
        const scripted = options.polls ?? [{ result: { events: [], cursor: null, hasMore: false } }];
        const answer = scripted[Math.min(polls++, scripted.length - 1)] as Answer;
        if ("error" in answer) return reply(res, message.id, answer, era === "modern");
        // The pace is each dialect's own field.
        const paced = sep
          ? { truncated: false, nextPollMs: 20, ...answer.result }
          : { nextPollSeconds: 0, ...answer.result };
        return reply(res, message.id, { result: paced }, era === "modern");
      }
      case "events/stream": {
        if (options.stream) return reply(res, message.id, options.stream, era === "modern");
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
        res.flushHeaders();
        const id = message.id;
        const write = (frame: Json) => res.write(`event: message\ndata: ${JSON.stringify(frame)}\n\n`);
        streams.push({
          params,
          notify: (method, notification) =>
            write({
              jsonrpc: "2.0",
              method,
              params: sep
                ? { ...notification, _meta: { [SUBSCRIPTION_ID]: id } }
                : { requestId: id, ...notification },
            }),
          end: () => {
            write({ jsonrpc: "2.0", id, result: sep ? { resultType: "complete" } : {} });
            res.end();
          },
        });
        return;
      }
      case "events/subscribe": {
        const delivery = params.delivery as { url: string; secret: string };
        subscribed = { url: delivery.url, secret: delivery.secret };
        return reply(
          res,
          message.id,
          options.subscribe ?? {
            result: {
              id: "sub_raw_1",
              refreshBefore: new Date(Date.now() + 60_000).toISOString(),
              cursor: null,
              truncated: false,
            },
          },
          era === "modern",
        );
      }
      case "events/unsubscribe":
        return reply(res, message.id, { result: {} }, era === "modern");
      default:
        return reply(res, message.id, notFound(message.method), false);
    }
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const url = new URL(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`);
  const close = async () => {
    http.closeAllConnections();
    await new Promise<void>((resolve) => http.close(() => resolve()));
  };
  open.push(close);

  return {
    url,
    received,
    streams,
    /** The params of every request of `method`, in order. */
    sent: (method: string) => received.filter((r) => r.method === method).map((r) => r.params),
    /** POSTs `body` to the subscribed callback, signed as Standard Webhooks says; resolves with the status. */
    async deliver(body: Json, webhookId: string): Promise<number> {
      if (!subscribed) throw new Error("nothing subscribed yet");
      const text = JSON.stringify(body);
      const timestamp = String(Math.floor(Date.now() / 1000));
      const key = Buffer.from(subscribed.secret.slice("whsec_".length), "base64");
      const signature = createHmac("sha256", key)
        .update(`${webhookId}.${timestamp}.${text}`)
        .digest("base64");
      const response = await fetch(subscribed.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "webhook-id": webhookId,
          "webhook-timestamp": timestamp,
          "webhook-signature": `v1,${signature}`,
          "x-mcp-subscription-id": "sub_raw_1",
        },
        body: text,
      });
      await response.arrayBuffer();
      return response.status;
    },
  };
}

function notFound(method: string): Answer {
  return { error: { code: -32601, message: `Method not found: ${method}` } };
}

function occurrence(eventId: string, cursor?: string | null): Json {
  return {
    eventId,
    name: EVENT,
    timestamp: new Date().toISOString(),
    data: { tick: eventId },
    ...(cursor === undefined ? {} : { cursor }),
  };
}

/** An SDK v2 Client negotiating the era, as a deployed client does. */
async function connect(url: URL): Promise<Client> {
  const client = new Client(
    { name: "raw-events-test", version: "1.0.0" },
    { versionNegotiation: { mode: "auto" } },
  );
  await client.connect(new StreamableHTTPClientTransport(url));
  open.push(() => client.close());
  return client;
}

function eventsClient(url: URL, more: Partial<EventsClientOptions> = {}) {
  const notices: SubscriptionNotice[] = [];
  const events = new EventsClient({
    connect: () => connect(url),
    pollFloorMs: 20,
    onNotice: (notice) => notices.push(notice),
    ...more,
  });
  open.push(() => events.close());
  return { events, notices };
}

/** An events client with a webhook receiver on loopback. */
async function hookedClient(url: URL, more: Partial<EventsClientOptions> = {}) {
  const receiver = await startReceiverServer();
  open.push(() => receiver.close());
  const client = eventsClient(url, { webhook: { url: receiver.url }, ...more });
  receiver.mount(client.events);
  return client;
}

describe("null and absent cursors from an independent SEP-3415 server", () => {
  it("push: delivers every event whose cursor is null; a null active or heartbeat cursor keeps the last real one", async () => {
    const server = await startRawServer();
    const { events } = eventsClient(server.url, { dialect: "sep-3415" });
    const sub = await subscribeWhenActive(server, events, { cursor: "s1", truncated: false });
    const [stream] = server.streams;
    for (const id of ["t1", "t2", "t3"]) stream?.notify("notifications/events/event", occurrence(id, null));
    expect((await take(sub, 3)).map((event) => event.eventId)).toEqual(["t1", "t2", "t3"]);
    stream?.notify("notifications/events/event", occurrence("t4"));
    stream?.notify("notifications/events/heartbeat", { cursor: null });
    expect((await take(sub, 1))[0]?.eventId).toBe("t4");
    expect(sub.cursor).toBe("s1");
    // The server ends the stream; the next one starts from the last real cursor, and its own
    // null `active` cursor does not erase it.
    stream?.end();
    await until(() => server.streams.length === 2, 5_000, "the stream to be reopened");
    expect(server.streams[1]?.params.cursor).toBe("s1");
    server.streams[1]?.notify("notifications/events/active", { cursor: null, truncated: false });
    server.streams[1]?.notify("notifications/events/event", occurrence("t5", null));
    expect((await take(sub, 1))[0]?.eventId).toBe("t5");
    expect(sub.cursor).toBe("s1");
    server.streams[1]?.notify("notifications/events/event", occurrence("t6", "s2"));
    await take(sub, 1);
    expect(sub.cursor).toBe("s2");
  });

  it("poll: delivers events with null or absent cursors; a null or absent result cursor keeps the last real one", async () => {
    const server = await startRawServer({
      polls: [
        { result: { events: [], cursor: "p1", hasMore: false } },
        { result: { events: [occurrence("e1", null), occurrence("e2")], cursor: null, hasMore: false } },
        { result: { events: [occurrence("e3", null)], hasMore: false } },
        { result: { events: [], cursor: null, hasMore: false } },
      ],
    });
    const { events } = eventsClient(server.url, { dialect: "sep-3415" });
    const sub = await events.subscribe(EVENT, {}, { delivery: "poll" });
    expect((await take(sub, 3)).map((event) => event.eventId)).toEqual(["e1", "e2", "e3"]);
    await until(() => server.sent("events/poll").length >= 4, 5_000, "a fourth poll");
    expect(
      server
        .sent("events/poll")
        .map((params) => params.cursor ?? null)
        .slice(0, 4),
    ).toEqual([null, "p1", "p1", "p1"]);
    expect(sub.cursor).toBe("p1");
  });

  it("poll: a truncated answer without a cursor is one gap; the void cursor is forgotten, not sent again", async () => {
    const server = await startRawServer({
      polls: [
        { result: { events: [], cursor: "p1", hasMore: false } },
        { result: { events: [occurrence("e1", null)], cursor: null, truncated: true, hasMore: false } },
        { result: { events: [], cursor: null, hasMore: false } },
      ],
    });
    const { events, notices } = eventsClient(server.url, { dialect: "sep-3415" });
    const sub = await events.subscribe(EVENT, {}, { delivery: "poll" });
    expect((await take(sub, 1))[0]?.eventId).toBe("e1");
    await until(() => server.sent("events/poll").length >= 4, 5_000, "two more polls");
    expect(
      server
        .sent("events/poll")
        .map((params) => params.cursor ?? null)
        .slice(0, 4),
    ).toEqual([null, "p1", null, null]);
    expect(notices.filter((notice) => notice.type === "gap")).toEqual([{ type: "gap", reason: "truncated" }]);
    expect(sub.cursor).toBeNull();
  });

  it("webhook: the receiver accepts events and gap envelopes whose cursor is null or absent, and keeps the last real cursor", async () => {
    const server = await startRawServer();
    const { events, notices } = await hookedClient(server.url, { dialect: "sep-3415" });
    const sub = await events.subscribe(EVENT, {}, { delivery: "webhook" });
    const statuses = [
      await server.deliver(occurrence("w1", "c1"), "w1"),
      await server.deliver(occurrence("w2", null), "w2"),
      await server.deliver(occurrence("w3"), "w3"),
      await server.deliver({ type: "gap", cursor: null }, "msg_gap_1"),
      await server.deliver({ type: "gap" }, "msg_gap_2"),
    ];
    expect(statuses.every((status) => status >= 200 && status < 300)).toBe(true);
    expect((await take(sub, 3)).map((event) => event.eventId)).toEqual(["w1", "w2", "w3"]);
    expect(notices.filter((notice) => notice.type === "gap")).toHaveLength(2);
    expect(sub.cursor).toBe("c1");
  });
});

/** Subscribes by push and answers the stream's opening with `active`. */
async function subscribeWhenActive(
  server: Awaited<ReturnType<typeof startRawServer>>,
  events: EventsClient,
  active: Json,
) {
  const subscribing = events.subscribe(EVENT, {}, { delivery: "push" });
  await until(() => server.streams.length === 1, 5_000, "the stream to open");
  server.streams[0]?.notify("notifications/events/active", active);
  return subscribing;
}

describe("the dialect follows the negotiated era unless the app names one", () => {
  /** Subscribes by poll with a filter and returns the first poll's params as the server saw them. */
  async function firstPoll(server: Awaited<ReturnType<typeof startRawServer>>, events: EventsClient) {
    const sub = await events.subscribe(EVENT, { market: "xetra" }, { delivery: "poll" });
    expect(sub.mode).toBe("poll");
    return server.sent("events/poll")[0];
  }

  it("2026-07-28 (server/discover): SEP-3415 by default, `arguments` on the wire", async () => {
    const server = await startRawServer({ era: "modern" });
    const { events } = eventsClient(server.url);
    expect(events.dialect).toBeUndefined();
    const poll = await firstPoll(server, events);
    expect(poll).toMatchObject({ name: EVENT, arguments: { market: "xetra" } });
    expect(poll).not.toHaveProperty("params");
    expect(server.received.map((r) => r.method)).not.toContain("initialize");
    expect(events.dialect?.name).toBe("sep-3415");
  });

  it("2026-07-28: a webhook subscription sends the client's own whsec_ secret, as SEP-3415 requires", async () => {
    const server = await startRawServer({ era: "modern" });
    const { events } = await hookedClient(server.url);
    await events.subscribe(EVENT, {}, { delivery: "webhook" });
    const [subscribe] = server.sent("events/subscribe");
    expect(subscribe).toMatchObject({
      arguments: {},
      delivery: { mode: "webhook", secret: expect.stringMatching(/^whsec_/) },
    });
    expect(subscribe).not.toHaveProperty("id");
  });

  it("2025-11-25 (initialize): the design sketch by default, `params` on the wire", async () => {
    const server = await startRawServer({ era: "legacy" });
    const { events } = eventsClient(server.url);
    const poll = await firstPoll(server, events);
    expect(server.received.map((r) => r.method)).toContain("initialize");
    expect(poll).toMatchObject({ name: EVENT, params: { market: "xetra" } });
    expect(poll).not.toHaveProperty("arguments");
    expect(events.dialect?.name).toBe("sketch");
  });

  it("a dialect the app names is spoken on either era", async () => {
    const modern = await startRawServer({ era: "modern" });
    const sketchOnModern = eventsClient(modern.url, { dialect: "sketch" }).events;
    expect(sketchOnModern.dialect?.name).toBe("sketch");
    expect(await firstPoll(modern, sketchOnModern)).toMatchObject({ params: { market: "xetra" } });
    const legacy = await startRawServer({ era: "legacy" });
    const sepOnLegacy = eventsClient(legacy.url, { dialect: "sep-3415" }).events;
    expect(await firstPoll(legacy, sepOnLegacy)).toMatchObject({ arguments: { market: "xetra" } });
  });

  it("an unknown dialect name is refused with a clear error", () => {
    expect(() =>
      eventsClient(new URL("http://127.0.0.1:9/mcp"), { dialect: "sep-9999" as "sketch" }),
    ).toThrow(
      expect.objectContaining({
        code: "ERR_EVENTS_INVALID_ARGUMENT",
        message: expect.stringMatching(/unknown dialect/),
      }),
    );
  });
});

describe("a refusal keeps the server's own message and data", () => {
  const refusal = {
    error: {
      code: -32012,
      message: "This callback needs a signed-in principal",
      data: { reason: "anonymous_webhook" },
    },
  };

  it.each([
    ["events/list", { list: refusal }, undefined],
    ["events/poll", { polls: [refusal] }, "poll"],
    ["events/stream", { stream: refusal }, "push"],
    ["events/subscribe", { subscribe: refusal }, "webhook"],
  ] as const)("%s refused with Forbidden", async (method, answers, mode) => {
    const server = await startRawServer({ era: "modern", ...answers });
    const { events } = await hookedClient(server.url);
    const attempt = mode === undefined ? events.list() : events.subscribe(EVENT, {}, { delivery: mode });
    const error = await attempt.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toMatchObject({
      code: "ERR_EVENTS_UNAUTHORIZED",
      serverCode: -32012,
      serverMessage: "This callback needs a signed-in principal",
      serverData: { reason: "anonymous_webhook" },
    });
    expect((error as Error).message).toBe(
      `${method}: the server answered Unauthorized: "This callback needs a signed-in principal" (reason: "anonymous_webhook")`,
    );
  });

  it("a stream the server terminates ends with its reason", async () => {
    const server = await startRawServer({ era: "modern" });
    const { events } = eventsClient(server.url);
    const sub = await subscribeWhenActive(server, events, { cursor: null, truncated: false });
    server.streams[0]?.notify("notifications/events/terminated", {
      error: { code: -32012, message: "Access revoked", data: { reason: "consent_withdrawn" } },
    });
    const error = await sub[Symbol.asyncIterator]()
      .next()
      .then(
        () => undefined,
        (caught: unknown) => caught,
      );
    expect(error).toMatchObject({
      code: "ERR_EVENTS_TERMINATED",
      serverCode: -32012,
      serverMessage: "Access revoked",
      serverData: { reason: "consent_withdrawn" },
      message: expect.stringContaining(
        '(ERR_EVENTS_UNAUTHORIZED): "Access revoked" (reason: "consent_withdrawn")',
      ),
    });
  });

  it("the server's words are quoted and escaped in the message, verbatim in serverMessage", async () => {
    const words = "Denied\u001b[2J\u202eevil\nline";
    const server = await startRawServer({ era: "modern", list: { error: { code: -32012, message: words } } });
    const { events } = eventsClient(server.url);
    const error = (await events.list().catch((caught: unknown) => caught)) as Error & {
      serverMessage: string;
    };
    expect(error.serverMessage).toBe(words);
    expect(error.message).toBe(
      String.raw`events/list: the server answered Unauthorized: "Denied\u001b[2J\u202eevil\nline"`,
    );
  });

  it("a message that is only the error's name adds nothing; its data.reason still shows", async () => {
    const server = await startRawServer({
      era: "modern",
      list: {
        error: {
          code: -32012,
          message: "Forbidden",
          data: { reason: "Webhook subscriptions need an authenticated principal" },
        },
      },
    });
    const { events } = eventsClient(server.url);
    await expect(events.list()).rejects.toMatchObject({
      message:
        'events/list: the server answered Unauthorized (reason: "Webhook subscriptions need an authenticated principal")',
      serverMessage: "Forbidden",
    });
  });
});
