import { describe, expect, it } from "vitest";
import { EventsClient, type EventsClientOptions, type SubscriptionNotice } from "../src/client/index.js";
import type { EventsServerOptions } from "../src/server/index.js";
import {
  connectHttp,
  expectEndsWhenRevoked,
  openedPerCase,
  startHttpEventsServer,
  take,
  until,
} from "./client-harness.js";
import { EVENT, Upstream } from "./client-upstream.js";

const opened = openedPerCase();

async function setup(
  serverOptions: EventsServerOptions = {},
  clientOptions: Partial<EventsClientOptions> = {},
) {
  const upstream = new Upstream();
  opened.server = await startHttpEventsServer((events) => upstream.register(events), {
    heartbeatMs: 100,
    pushIntervalMs: 50,
    ...serverOptions,
  });
  const url = opened.server.url;
  const notices: SubscriptionNotice[] = [];
  const events = new EventsClient({
    connect: () => connectHttp(url),
    heartbeatWindowMs: 1_000,
    onNotice: (notice) => notices.push(notice),
    ...clientOptions,
  });
  opened.clients.push(events);
  return { upstream, events, notices };
}

describe("push mode over Streamable HTTP", () => {
  it("is chosen over poll when the server offers it and no webhook is configured", async () => {
    const { upstream, events } = await setup();
    const sub = await events.subscribe(EVENT);
    expect(sub.mode).toBe("push");
    upstream.append("pushed");
    expect((await take(sub, 1))[0]?.data.text).toBe("pushed");
  });

  it("reopens the stream from the last cursor when no heartbeat arrives within the window", async () => {
    const { upstream, events, notices } = await setup({ heartbeatMs: 30_000 }, { heartbeatWindowMs: 300 });
    const sub = await events.subscribe(EVENT);
    upstream.append("one");
    expect((await take(sub, 1))[0]?.data.text).toBe("one");
    await until(
      () => notices.some((n) => n.type === "reconnecting" && n.reason === "heartbeat-missed"),
      5_000,
      "a missed heartbeat",
    );
    upstream.append("two");
    expect((await take(sub, 1))[0]?.data.text).toBe("two");
  });

  it("reconnects after the stream's connection drops, losing nothing", async () => {
    const { upstream, events, notices } = await setup({}, { heartbeatWindowMs: 500 });
    const sub = await events.subscribe(EVENT);
    upstream.append("before");
    await take(sub, 1);
    for (const socket of opened.server?.sockets ?? []) socket.destroy();
    upstream.append("while dropped");
    upstream.append("after");
    const got = await take(sub, 2);
    expect(got.map((event) => event.data.text)).toEqual(["while dropped", "after"]);
    expect(notices.some((n) => n.type === "reconnecting")).toBe(true);
  });

  it("survives a server restart: new session, same cursor", async () => {
    const { upstream, events } = await setup({}, { heartbeatWindowMs: 500 });
    const sub = await events.subscribe(EVENT);
    upstream.append("before");
    await take(sub, 1);
    await opened.server?.restart();
    upstream.append("after restart");
    expect((await take(sub, 1, 15_000))[0]?.data.text).toBe("after restart");
  });

  it("restarts from now on CursorExpired and reports the gap", async () => {
    const { upstream, events, notices } = await setup({ pushIntervalMs: 200 });
    const sub = await events.subscribe(EVENT);
    upstream.append("seen");
    await take(sub, 1);
    upstream.append("lost");
    upstream.compact();
    await until(() => notices.some((n) => n.type === "gap"), 5_000, "a gap");
    // Restarting from now: what is appended once the new stream is active arrives.
    await until(() => sub.cursor !== null, 5_000, "the new stream's cursor");
    upstream.append("after");
    const next = await take(sub, 1);
    expect(next[0]?.data.text).toBe("after");
  });

  it("ends with ERR_EVENTS_TERMINATED when the server revokes authorization", async () => {
    const { upstream, events } = await setup();
    await expectEndsWhenRevoked(upstream, opened.server, await events.subscribe(EVENT));
  });

  it("hands each eventId over once, even when the server sends it twice", async () => {
    const { events } = await setup();
    opened.server?.events.event({ name: "emitted", description: "emit-only" });
    const sub = await events.subscribe("emitted");
    opened.server?.events.emit("emitted", { eventId: "same", data: { n: 1 } });
    opened.server?.events.emit("emitted", { eventId: "same", data: { n: 2 } });
    opened.server?.events.emit("emitted", { eventId: "other", data: { n: 3 } });
    const got = await take(sub, 2);
    expect(got.map((event) => event.eventId)).toEqual(["same", "other"]);
  });

  it("cancel closes the stream on the server", async () => {
    const { events } = await setup();
    const sub = await events.subscribe(EVENT);
    await until(() => opened.server?.events.liveSubscriptions === 1, 5_000, "the stream to be live");
    await sub.cancel();
    await until(
      () => opened.server?.events.liveSubscriptions === 0,
      5_000,
      "the stream to end on the server",
    );
  });
});

describe("delivery mode selection", () => {
  it("refuses a forced mode the server does not list, or the client cannot do, with a clear error", async () => {
    const upstream = new Upstream();
    opened.server = await startHttpEventsServer((events) => {
      upstream.register(events);
      events.event({
        name: "poll.only",
        delivery: { push: false },
        check: () => ({ events: [], cursor: "0" }),
      });
    });
    const url = opened.server.url;
    const events = new EventsClient({ connect: () => connectHttp(url) });
    opened.clients.push(events);
    await expect(events.subscribe("poll.only", {}, { delivery: "push" })).rejects.toMatchObject({
      code: "ERR_EVENTS_DELIVERY_MODE_UNAVAILABLE",
      message: expect.stringContaining("offers poll.only by poll"),
    });
    await expect(events.subscribe(EVENT, {}, { delivery: "webhook" })).rejects.toMatchObject({
      code: "ERR_EVENTS_DELIVERY_MODE_UNAVAILABLE",
    });
    const sub = await events.subscribe("poll.only");
    expect(sub.mode).toBe("poll");
    const forced = await events.subscribe(EVENT, {}, { delivery: "poll" });
    expect(forced.mode).toBe("poll");
  });

  it("refuses an event type the server does not list", async () => {
    opened.server = await startHttpEventsServer(() => {});
    const url = opened.server.url;
    const events = new EventsClient({ connect: () => connectHttp(url) });
    opened.clients.push(events);
    await expect(events.subscribe("no.such.event")).rejects.toMatchObject({
      code: "ERR_EVENTS_EVENT_NOT_FOUND",
    });
  });
});
