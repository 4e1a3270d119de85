import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  createFileCursorStore,
  createMemoryCursorStore,
  EventsClient,
  type EventsClientOptions,
  type SubscriptionNotice,
  type Timers,
} from "../src/client/index.js";
import { connectHttp, openedPerCase, startHttpEventsServer, take, until } from "./client-harness.js";
import { EVENT, Upstream } from "./client-upstream.js";

/** Real time, but every wait is recorded and cut to a few ms so a 30 s interval costs nothing. */
function recordingTimers(): Timers & { waits: number[] } {
  const waits: number[] = [];
  return {
    waits,
    now: () => Date.now(),
    sleep: (ms, signal) =>
      new Promise((resolve) => {
        waits.push(ms);
        const timer = setTimeout(resolve, Math.min(ms, 15));
        signal.addEventListener("abort", () => {
          clearTimeout(timer);
          resolve();
        });
      }),
  };
}

const opened = openedPerCase();

async function setup(nextPollMs: number, options: Partial<EventsClientOptions> = {}) {
  const upstream = new Upstream();
  opened.server = await startHttpEventsServer((events) => upstream.register(events, nextPollMs), {
    nextPollMs,
  });
  const url = opened.server.url;
  const timers = recordingTimers();
  const events = new EventsClient({ connect: () => connectHttp(url), timers, push: false, ...options });
  opened.clients.push(events);
  return { upstream, timers, events };
}

describe("poll mode", () => {
  it("bootstraps from now, then delivers what was appended, each event once", async () => {
    const { upstream, events } = await setup(1_000);
    upstream.append("before");
    const sub = await events.subscribe(EVENT);
    expect(sub.mode).toBe("poll");
    upstream.append("one");
    upstream.append("two");
    const got = await take(sub, 2);
    expect(got.map((event) => event.data.text)).toEqual(["one", "two"]);
    expect(sub.cursor).toBe("3");
  });

  it("waits the server's nextPollMs between polls, never less than the 1 s floor", async () => {
    const slow = await setup(5_000);
    await slow.events.subscribe(EVENT);
    await until(() => slow.timers.waits.length >= 2, 5_000, "two polls");
    expect(slow.timers.waits.slice(0, 2)).toEqual([5_000, 5_000]);
    await slow.events.close();
    await opened.server?.close();

    const eager = await setup(10);
    await eager.events.subscribe(EVENT);
    await until(() => eager.timers.waits.length >= 2, 5_000, "two polls");
    expect(eager.timers.waits.slice(0, 2)).toEqual([1_000, 1_000]);
  });

  it("drains a backlog on hasMore without waiting between batches", async () => {
    const { upstream, timers, events } = await setup(30_000, { maxEvents: 2 });
    const sub = await events.subscribe(EVENT);
    const waitsBefore = timers.waits.length;
    for (let i = 0; i < 5; i++) upstream.append(`line ${i}`);
    const got = await take(sub, 5);
    expect(got.map((event) => event.eventId)).toEqual(["e1", "e2", "e3", "e4", "e5"]);
    // Three batches (2 + 2 + 1) after one interval: only the interval and the wait after the last batch.
    await until(() => timers.waits.length >= waitsBefore + 2, 5_000, "the wait after the drain");
    expect(timers.waits.slice(waitsBefore, waitsBefore + 2)).toEqual([30_000, 30_000]);
  });

  it("recovers from CursorExpired by starting again from now and reports the gap", async () => {
    const notices: SubscriptionNotice[] = [];
    const { upstream, events } = await setup(1_000);
    const sub = await events.subscribe(EVENT, {}, { onNotice: (notice) => notices.push(notice) });
    upstream.append("seen");
    expect((await take(sub, 1))[0]?.data.text).toBe("seen");
    upstream.append("lost");
    upstream.compact();
    await until(() => notices.some((notice) => notice.type === "gap"), 5_000, "a gap");
    expect(notices.find((notice) => notice.type === "gap")).toEqual({
      type: "gap",
      reason: "cursor-expired",
    });
    // Delivery starts again from now: wait for the new starting point before the next event, or
    // the event may fall before it (and be part of the gap, as the sketch allows).
    await until(() => typeof sub.cursor === "string", 10_000, "a new cursor after the gap");
    upstream.append("after");
    expect((await take(sub, 1))[0]?.data.text).toBe("after");
  });

  it("ends the iterator with ERR_EVENTS_TERMINATED when authorization is revoked", async () => {
    const { upstream, events } = await setup(1_000);
    const sub = await events.subscribe(EVENT);
    upstream.allowed = false;
    const iterator = sub[Symbol.asyncIterator]();
    await expect(iterator.next()).rejects.toMatchObject({
      code: "ERR_EVENTS_TERMINATED",
      serverCode: -32012,
    });
  });

  it("refuses a subscription the server does not authorize with ERR_EVENTS_UNAUTHORIZED", async () => {
    const { upstream, events } = await setup(1_000);
    upstream.allowed = false;
    await expect(events.subscribe(EVENT)).rejects.toMatchObject({ code: "ERR_EVENTS_UNAUTHORIZED" });
  });

  it("goes on from its cursor across a server restart, with a new connection", async () => {
    const notices: SubscriptionNotice[] = [];
    const { upstream, events } = await setup(1_000);
    const sub = await events.subscribe(EVENT, {}, { onNotice: (notice) => notices.push(notice) });
    upstream.append("before restart");
    await take(sub, 1);
    await opened.server?.restart();
    upstream.append("during restart");
    const got = await take(sub, 1);
    expect(got[0]?.data.text).toBe("during restart");
    expect(notices.some((notice) => notice.type === "reconnecting")).toBe(true);
  });

  it("persists the cursor in a JSON file and resumes after a client restart without repeats", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "events-client-"));
    try {
      const file = path.join(dir, "cursors.json");
      const { upstream, events } = await setup(1_000, { store: await createFileCursorStore(file) });
      const sub = await events.subscribe(EVENT);
      upstream.append("first");
      await take(sub, 1);
      await events.close();

      upstream.append("while away");
      const url = opened.server?.url as URL;
      const again = new EventsClient({
        connect: () => connectHttp(url),
        push: false,
        timers: recordingTimers(),
        store: await createFileCursorStore(file),
      });
      opened.clients.push(again);
      const resumed = await again.subscribe(EVENT);
      upstream.append("after");
      const got = await take(resumed, 2);
      expect(got.map((event) => event.data.text)).toEqual(["while away", "after"]);
      // Closed before the directory goes: a cursor save still in flight would write into it.
      await again.close();
    } finally {
      await rm(dir, { recursive: true, force: true, maxRetries: 3 });
    }
  });

  it("forgets the cursor when the app cancels", async () => {
    const store = createMemoryCursorStore();
    const { upstream, events } = await setup(1_000, { store });
    const sub = await events.subscribe(EVENT);
    upstream.append("x");
    await take(sub, 1);
    expect(store.size).toBe(1);
    await sub.cancel();
    expect(store.size).toBe(0);
    const after = await sub[Symbol.asyncIterator]().next();
    expect(after.done).toBe(true);
  });
});
