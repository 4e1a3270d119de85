// The EventsClient on an SDK v2 Client against a modern-only server (2026-07-28, stateless,
// `server/discover`, `initialize` refused: the package's own server side inside `createMcpHandler`
// with `legacy: "reject"`), in poll, push and webhook, in both dialects; and the same v2 Client
// against a legacy-era (2025-11-25) server. Real HTTP on loopback throughout.
import { developmentPolicy } from "@doorbell/webhooks";
import type { Client } from "@modelcontextprotocol/client";
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod/v4";
import { EventsClient, type EventsClientOptions, type SubscriptionNotice } from "../src/client/index.js";
import { looseResult } from "../src/client/wire.js";
import type { DialectName } from "../src/protocol/index.js";
import {
  connectHttp,
  expectEndsWhenRevoked,
  openedPerCase,
  type ServerEra,
  startHttpEventsServer,
  startReceiverServer,
  take,
  until,
} from "./client-harness.js";
import { EVENT, Upstream } from "./client-upstream.js";
import { serveFetch } from "./interop-harness.js";

const MODERN = "2026-07-28";
const LEGACY = "2025-11-25";
const EMITTED = "note.added";

const opened = openedPerCase();
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function setup(
  era: ServerEra,
  dialect: DialectName,
  clientOptions: Partial<EventsClientOptions> = {},
  negotiation: "auto" | "legacy" = "auto",
) {
  const upstream = new Upstream();
  opened.server = await startHttpEventsServer(
    (events) => {
      upstream.register(events);
      events.event({ name: EMITTED, description: "emit-only" });
      events.event({
        name: "typed.check",
        params: z.object({ folder: z.string() }),
        check: () => ({ events: [], cursor: "0" }),
      });
    },
    {
      dialect,
      heartbeatMs: 100,
      pushIntervalMs: 50,
      nextPollMs: 1_000,
      webhook: { policy: developmentPolicy(), allowAnonymous: true, ttlMs: 60_000 },
    },
    0,
    era,
  );
  const url = opened.server.url;
  const clients: Client[] = [];
  const notices: SubscriptionNotice[] = [];
  const events = new EventsClient({
    connect: async () => {
      const client = await connectHttp(url, negotiation);
      clients.push(client);
      return client;
    },
    dialect,
    pollFloorMs: 50,
    heartbeatWindowMs: 1_000,
    onNotice: (notice) => notices.push(notice),
    ...clientOptions,
  });
  opened.clients.push(events);
  return { upstream, events, notices, clients, url };
}

async function withReceiver() {
  const receiver = await startReceiverServer();
  closers.push(() => receiver.close());
  return receiver;
}

/** On a 2025-11-25 connection: one event reaches a poll, a push and a webhook subscription. */
async function allThreeModesOnLegacy(
  receiver: Awaited<ReturnType<typeof withReceiver>>,
  { upstream, events, clients }: Pick<Awaited<ReturnType<typeof setup>>, "upstream" | "events" | "clients">,
) {
  receiver.mount(events);
  const polled = await events.subscribe(EVENT, {}, { delivery: "poll" });
  const pushed = await events.subscribe(EVENT, { copy: "push" }, { delivery: "push" });
  const hooked = await events.subscribe(EVENT, { copy: "webhook" }, { delivery: "webhook" });
  expect(clients[0]?.getNegotiatedProtocolVersion()).toBe(LEGACY);
  upstream.append("to all three");
  for (const sub of [polled, pushed, hooked]) {
    expect((await take(sub, 1))[0]?.data.text).toBe("to all three");
  }
}

describe.each(["sep-3415", "sketch"] as const)("a modern-only server, %s dialect", (dialect) => {
  it("is reached in 2026-07-28 by the v2 client; a client that only speaks 2025-11-25 is refused", async () => {
    const { events, clients, url } = await setup("modern", dialect);
    expect((await events.list()).map((type) => type.name)).toContain(EVENT);
    expect(clients[0]?.getNegotiatedProtocolVersion()).toBe(MODERN);
    await expect(connectHttp(url, "legacy")).rejects.toThrow();
  });

  it("a connected v2 Client given as `client` is used as it is, and left open on close", async () => {
    const { upstream, url } = await setup("modern", dialect);
    const client = await connectHttp(url);
    closers.push(() => client.close());
    const events = new EventsClient({ client, dialect, pollFloorMs: 50 });
    const sub = await events.subscribe(EVENT, {}, { delivery: "push" });
    upstream.append("through the given client");
    expect((await take(sub, 1))[0]?.data.text).toBe("through the given client");
    await events.close();
    // The app's client stays the app's: still connected, its requests answered.
    await expect(client.request({ method: "events/list", params: {} }, looseResult)).resolves.toMatchObject({
      events: expect.any(Array),
    });
  });

  it("poll: bootstraps from now and delivers each appended event once", async () => {
    const { upstream, events } = await setup("modern", dialect);
    upstream.append("before");
    const sub = await events.subscribe(EVENT, {}, { delivery: "poll" });
    expect(sub.mode).toBe("poll");
    upstream.append("one");
    upstream.append("two");
    expect((await take(sub, 2)).map((event) => event.data.text)).toEqual(["one", "two"]);
    expect(sub.cursor).toBe("3");
  });

  it("push: two streams on one v2 Client each get their own notifications, routed by request id", async () => {
    const { upstream, events } = await setup("modern", dialect);
    const logged = await events.subscribe(EVENT, {}, { delivery: "push" });
    const noted = await events.subscribe(EMITTED, {}, { delivery: "push" });
    expect([logged.mode, noted.mode]).toEqual(["push", "push"]);
    await until(() => opened.server?.events.liveSubscriptions === 2, 5_000, "both streams live");
    upstream.append("to the log");
    opened.server?.events.emit(EMITTED, { eventId: "n1", data: { text: "a note" } });
    const [fromLog] = await take(logged, 1);
    const [fromNotes] = await take(noted, 1);
    expect(fromLog?.name).toBe(EVENT);
    expect(fromLog?.data.text).toBe("to the log");
    expect(fromNotes?.name).toBe(EMITTED);
    expect(fromNotes?.data.text).toBe("a note");
    // Nothing crossed over: the next on each is its own.
    opened.server?.events.emit(EMITTED, { eventId: "n2", data: { text: "second note" } });
    upstream.append("second line");
    expect((await take(logged, 1))[0]?.data.text).toBe("second line");
    expect((await take(noted, 1))[0]?.data.text).toBe("second note");
  });

  it("push: reopens at once after the stream's connection drops, losing nothing", async () => {
    // The heartbeat window is long: the end of the request's own SSE stream is what is noticed.
    const { upstream, events, notices } = await setup("modern", dialect, { heartbeatWindowMs: 30_000 });
    const sub = await events.subscribe(EVENT, {}, { delivery: "push" });
    upstream.append("before");
    await take(sub, 1);
    for (const socket of opened.server?.sockets ?? []) socket.destroy();
    upstream.append("while dropped");
    upstream.append("after");
    expect((await take(sub, 2, 8_000)).map((event) => event.data.text)).toEqual(["while dropped", "after"]);
    expect(notices.filter((n) => n.type === "reconnecting")).toEqual([
      { type: "reconnecting", reason: "stream-ended", attempt: 1 },
    ]);
  });

  it("push: cancel ends the stream on the server; a revocation ends the subscription", async () => {
    const { upstream, events } = await setup("modern", dialect);
    const first = await events.subscribe(EVENT, {}, { delivery: "push" });
    await until(() => opened.server?.events.liveSubscriptions === 1, 5_000, "the stream to be live");
    await first.cancel();
    await until(() => opened.server?.events.liveSubscriptions === 0, 5_000, "the stream to end");
    const second = await events.subscribe(EVENT, {}, { delivery: "push" });
    await expectEndsWhenRevoked(upstream, opened.server, second);
  });

  it("webhook: subscribes with the loopback receiver, delivers, and unsubscribes on cancel", async () => {
    const receiver = await withReceiver();
    const { upstream, events } = await setup("modern", dialect, { webhook: { url: receiver.url } });
    receiver.mount(events);
    const sub = await events.subscribe(EVENT);
    expect(sub.mode).toBe("webhook");
    upstream.append("hooked");
    expect((await take(sub, 1))[0]?.data.text).toBe("hooked");
    expect(sub.cursor).toBe("1");
    await until(
      async () => (await opened.server?.events.countSubscriptions()) === 1,
      5_000,
      "the subscription",
    );
    await sub.cancel();
    await until(
      async () => (await opened.server?.events.countSubscriptions()) === 0,
      5_000,
      "the unsubscribe",
    );
  });

  it("webhook: a revocation ends the subscription with ERR_EVENTS_TERMINATED", async () => {
    const receiver = await withReceiver();
    const { upstream, events } = await setup("modern", dialect, { webhook: { url: receiver.url } });
    receiver.mount(events);
    await expectEndsWhenRevoked(upstream, opened.server, await events.subscribe(EVENT));
  });

  it("maps the server's JSON-RPC errors, as v2 raises them, to the client's codes", async () => {
    const { events } = await setup("modern", dialect);
    await expect(events.subscribe("typed.check", { folder: 5 }, { delivery: "poll" })).rejects.toMatchObject({
      code: "ERR_EVENTS_INVALID_PARAMS",
      serverCode: -32602,
    });
  });
});

describe("the same v2 client against a legacy-era (2025-11-25) server", () => {
  it.each(["sep-3415", "sketch"] as const)(
    "%s: settles on 2025-11-25 and works by poll, push and webhook",
    async (dialect) => {
      const receiver = await withReceiver();
      const { upstream, events, clients } = await setup("legacy", dialect, {
        webhook: { url: receiver.url },
      });
      await allThreeModesOnLegacy(receiver, { upstream, events, clients });
    },
  );
});

describe("a v2 server's stateless 2025-11-25 leg, reached by a v2 client pinned to 2025-11-25", () => {
  it.each(["sep-3415", "sketch"] as const)("%s: poll, push and webhook", async (dialect) => {
    const receiver = await withReceiver();
    const { upstream, events, clients } = await setup(
      "dual",
      dialect,
      { webhook: { url: receiver.url } },
      "legacy",
    );
    await allThreeModesOnLegacy(receiver, { upstream, events, clients });
  });
});

describe("a v2 server without Events", () => {
  it("answers events/list with MethodNotFound, which the client reports as ERR_EVENTS_NOT_SUPPORTED", async () => {
    const handler = createMcpHandler(
      () => {
        const server = new McpServer({ name: "no-events", version: "1.0.0" });
        server.registerTool("noop", { inputSchema: z.object({}) }, () => ({ content: [] }));
        return server;
      },
      { legacy: "reject" },
    );
    const http = await serveFetch((request) => handler.fetch(request));
    closers.push(async () => {
      await handler.close();
      await http.close();
    });
    const url = new URL(`${http.url}/mcp`);
    const events = new EventsClient({ connect: () => connectHttp(url), dialect: "sep-3415" });
    opened.clients.push(events);
    await expect(events.list()).rejects.toMatchObject({
      code: "ERR_EVENTS_NOT_SUPPORTED",
      serverCode: -32601,
    });
  });
});
