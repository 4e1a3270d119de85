// `maxAgeMs` on poll and push (events/stream), over a real server on loopback: events older than
// now − maxAgeMs by their timestamp are not delivered (for check functions too), a null cursor on
// an emit-only type replays the kept events that young, and a maxAgeMs that is not a
// non-negative integer is InvalidParams.
import { afterEach, describe, expect, it } from "vitest";
import { createEventsServer, type EventsServer } from "../src/index.js";
import { type Json, type Listening, next, RawSession, serveEvents } from "./harness.js";

const T0 = Date.parse("2026-10-20T12:00:00Z");
let now = T0;
let events: EventsServer;
let http: Listening;

/** The upstream of `log.appended`: entries with when they happened; the cursor is an index. */
const upstream: { id: string; at: number }[] = [];

afterEach(async () => {
  await http?.close();
  await events?.close();
});

async function start(): Promise<RawSession> {
  now = T0;
  upstream.length = 0;
  events = await createEventsServer({ clock: () => now, pushIntervalMs: 30 });
  events.event({
    name: "log.appended",
    check: (_ctx, _params, cursor) => {
      const from = cursor === null ? upstream.length : Number(cursor);
      return {
        events: upstream.slice(from).map((entry) => ({
          eventId: entry.id,
          data: { id: entry.id },
          timestamp: new Date(entry.at).toISOString(),
        })),
        cursor: String(upstream.length),
      };
    },
  });
  events.event({ name: "door.opened" });
  http = await serveEvents(events);
  return RawSession.open(http.url);
}

const ids = (result: unknown) =>
  ((result as { events: { eventId: string }[] }).events ?? []).map((e) => e.eventId);

describe("maxAgeMs on a type with a check function", () => {
  it("poll leaves out events older than maxAgeMs and still moves its cursor past them", async () => {
    const session = await start();
    upstream.push({ id: "old", at: T0 - 60_000 }, { id: "young", at: T0 - 5_000 });
    const aged = await session.request(1, "events/poll", {
      name: "log.appended",
      arguments: {},
      cursor: "0",
      maxAgeMs: 30_000,
    });
    expect(ids(aged.result)).toEqual(["young"]);
    expect(aged.result).toMatchObject({ cursor: "2", truncated: false });
    const all = await session.request(2, "events/poll", { name: "log.appended", arguments: {}, cursor: "0" });
    expect(ids(all.result)).toEqual(["old", "young"]);
  });

  it("events/stream pushes only the events young enough", async () => {
    const session = await start();
    const stream = session.open(1, "events/stream", {
      name: "log.appended",
      arguments: {},
      cursor: "0",
      maxAgeMs: 30_000,
    });
    try {
      await next(stream.messages, (m) => m.method === "notifications/events/active");
      upstream.push({ id: "old", at: T0 - 60_000 }, { id: "young", at: T0 - 1_000 });
      events.wake("log.appended");
      const pushed = await next(stream.messages, (m) => m.method === "notifications/events/event");
      expect((pushed.params as Json).eventId).toBe("young");
    } finally {
      stream.abort();
    }
  });
});

describe("maxAgeMs on an emit-only type (the emit buffer)", () => {
  async function emitOldAndYoung() {
    now = T0 - 60_000;
    events.emit("door.opened", { eventId: "old", data: {} });
    now = T0 - 5_000;
    events.emit("door.opened", { eventId: "young", data: {} });
    now = T0;
  }

  it("poll with a null cursor replays the kept events that young; without maxAgeMs it starts now", async () => {
    const session = await start();
    await emitOldAndYoung();
    const replayed = await session.request(1, "events/poll", {
      name: "door.opened",
      arguments: {},
      cursor: null,
      maxAgeMs: 30_000,
    });
    expect(ids(replayed.result)).toEqual(["young"]);
    const fresh = await session.request(2, "events/poll", {
      name: "door.opened",
      arguments: {},
      cursor: null,
    });
    expect(ids(fresh.result)).toEqual([]);
    // The replay's cursor goes on from there.
    const after = await session.request(3, "events/poll", {
      name: "door.opened",
      arguments: {},
      cursor: (replayed.result as { cursor: string }).cursor,
    });
    expect(ids(after.result)).toEqual([]);
  });

  it("poll from a cursor leaves out what is older than maxAgeMs", async () => {
    const session = await start();
    const start_ = await session.request(1, "events/poll", {
      name: "door.opened",
      arguments: {},
      cursor: null,
    });
    await emitOldAndYoung();
    const read = await session.request(2, "events/poll", {
      name: "door.opened",
      arguments: {},
      cursor: (start_.result as { cursor: string }).cursor,
      maxAgeMs: 30_000,
    });
    expect(ids(read.result)).toEqual(["young"]);
  });

  it("events/stream with a null cursor replays the kept events that young after active", async () => {
    const session = await start();
    await emitOldAndYoung();
    const stream = session.open(1, "events/stream", {
      name: "door.opened",
      arguments: {},
      cursor: null,
      maxAgeMs: 30_000,
    });
    try {
      const active = await next(stream.messages, (m) => m.method === "notifications/events/active");
      expect((active.params as Json).cursor).toEqual(expect.any(String));
      const replayed = await next(stream.messages, (m) => m.method === "notifications/events/event");
      expect((replayed.params as Json).eventId).toBe("young");
      events.emit("door.opened", { eventId: "live", data: {} });
      const live = await next(stream.messages, (m) => m.method === "notifications/events/event");
      expect((live.params as Json).eventId).toBe("live");
    } finally {
      stream.abort();
    }
  });
});

describe("maxAgeMs must be a non-negative integer", () => {
  it.each([
    ["SEP-3415 poll", "events/poll", { arguments: {} }, -1],
    ["SEP-3415 poll", "events/poll", { arguments: {} }, 1.5],
    ["SEP-3415 poll", "events/poll", { arguments: {} }, "30000"],
    ["SEP-3415 stream", "events/stream", { arguments: {} }, -1],
    ["sketch poll", "events/poll", { params: {} }, -1],
    ["sketch stream", "events/stream", { params: {} }, "30000"],
  ])("%s with maxAgeMs %j is -32602 naming maxAgeMs", async (_what, method, args, maxAgeMs) => {
    const session = await start();
    const { error } = await session.request(1, method, {
      name: "door.opened",
      ...args,
      cursor: null,
      maxAgeMs,
    });
    expect(error).toMatchObject({ code: -32602, message: expect.stringContaining("maxAgeMs") });
    expect(events.liveSubscriptions).toBe(0);
  });
});
