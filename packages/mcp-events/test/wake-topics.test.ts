// `wake(name, { topic })` with several topics, over a real server on loopback: one wake runs the
// checks of the subscriptions of exactly those topics. A change that touches many records (one
// offer matching many intents) is then one wake and, with a store, one read of the stored webhook
// subscriptions, not one per record.
import { afterEach, expect, it } from "vitest";
import { z } from "zod";
import { createEventsServer, type EventsServer } from "../src/index.js";
import { type Json, type Listening, next, RawSession, serveEvents } from "./harness.js";

let events: EventsServer;
let http: Listening;

afterEach(async () => {
  await http?.close();
  await events?.close();
});

it("a wake naming several topics runs the checks of those topics' subscriptions and of no other", async () => {
  /** Each record's changes so far; the cursor is how many were seen. */
  const changes = new Map<string, string[]>([
    ["a", []],
    ["b", []],
    ["c", []],
  ]);
  const checked: string[] = [];
  // An interval far longer than the test: only wakes run the checks after the first.
  events = await createEventsServer({ pushIntervalMs: 600_000 });
  events.event({
    name: "record.changed",
    params: z.object({ id: z.string() }),
    topic: (_ctx, params) => params.id,
    check: (_ctx, params, cursor) => {
      checked.push(params.id);
      const list = changes.get(params.id) ?? [];
      const from = cursor === null ? list.length : Number(cursor);
      return {
        events: list.slice(from).map((eventId) => ({ eventId, data: { id: params.id } })),
        cursor: String(list.length),
      };
    },
  });
  http = await serveEvents(events);
  const session = await RawSession.open(http.url);
  const streams = ["a", "b", "c"].map((id, n) =>
    session.open(n + 1, "events/stream", { name: "record.changed", arguments: { id }, cursor: "0" }),
  );
  try {
    for (const stream of streams)
      await next(stream.messages, (m) => m.method === "notifications/events/active");
    checked.length = 0;
    for (const id of ["a", "b", "c"]) changes.get(id)?.push(`${id}-1`);
    events.wake("record.changed", { topic: ["a", "b"] });
    const pushed = await Promise.all(
      streams
        .slice(0, 2)
        .map((stream) => next(stream.messages, (m) => m.method === "notifications/events/event")),
    );
    expect(pushed.map((m) => (m.params as Json).eventId)).toEqual(["a-1", "b-1"]);
    expect(checked.sort()).toEqual(["a", "b"]);
    // The one left out is woken by its own topic, and then only it.
    events.wake("record.changed", { topic: "c" });
    const third = await next(
      streams[2]?.messages as AsyncGenerator<Json>,
      (m) => m.method === "notifications/events/event",
    );
    expect((third.params as Json).eventId).toBe("c-1");
    expect(checked.sort()).toEqual(["a", "b", "c"]);
  } finally {
    for (const stream of streams) stream.abort();
  }
});
