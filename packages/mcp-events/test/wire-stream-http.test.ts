import { afterEach, describe, expect, it } from "vitest";
import { createEventsServer, type EventsServer } from "../src/index.js";
import { emailEvent, emailReceived, emitEmail, type Hooks, incidentCreated, newHooks } from "./fixtures.js";
import { type Listening, next, RawSession, serveEvents, until } from "./harness.js";

let events: EventsServer;
let http: Listening;
let hooks: Hooks;
const upstream = { log: [] as { id: string; severity: string }[], compactedBefore: 0 };

async function start(options: Parameters<typeof createEventsServer>[0] = {}) {
  hooks = newHooks();
  events = await createEventsServer(options);
  events.event(emailReceived(hooks));
  events.event(incidentCreated(upstream));
  http = await serveEvents(events);
}
afterEach(async () => {
  await http?.close();
  await events?.close();
});

const request = {
  id: "sub_email",
  name: "email.received",
  params: { from: "*@anthropic.com", redact_pii: true },
  cursor: null,
};
const isMethod = (method: string) => (m: Record<string, unknown>) => m.method === method;

describe("events/stream over Streamable HTTP replays the sketch (SSE response of the POST)", () => {
  it("active, then each event as notifications/events/event with requestId, id and cursor", async () => {
    await start();
    const session = await RawSession.open(http.url);
    const stream = session.open(1, "events/stream", request);
    const active = await next(stream.messages);
    expect(active).toEqual({
      jsonrpc: "2.0",
      method: "notifications/events/active",
      params: { requestId: 1, id: "sub_email", cursor: expect.any(String) },
    });
    emitEmail(events, "evt_001", "dsp@anthropic.com");
    emitEmail(events, "evt_skip", "other@example.com");
    const event = await next(stream.messages);
    expect(event).toEqual({
      jsonrpc: "2.0",
      method: "notifications/events/event",
      params: {
        requestId: 1,
        id: "sub_email",
        ...emailEvent("evt_001", "[redacted]"),
        cursor: expect.any(String),
      },
    });
    stream.abort();
  });

  it("an expired cursor is a transient notifications/events/error; the stream stays open", async () => {
    await start();
    const session = await RawSession.open(http.url);
    const stream = session.open(7, "events/stream", { ...request, cursor: "gone.1" });
    await next(stream.messages, isMethod("notifications/events/active"));
    const error = await next(stream.messages);
    expect(error.params).toMatchObject({
      requestId: 7,
      id: "sub_email",
      error: { code: -32014, message: "CursorExpired" },
    });
    emitEmail(events, "evt_after", "dsp@anthropic.com");
    expect((await next(stream.messages)).params).toMatchObject({ eventId: "evt_after" });
    stream.abort();
  });

  it("heartbeats carry the requestId at the configured interval", async () => {
    await start({ heartbeatMs: 50 });
    const session = await RawSession.open(http.url);
    const stream = session.open(3, "events/stream", request);
    const beat = await next(stream.messages, isMethod("notifications/events/heartbeat"));
    expect(beat.params).toMatchObject({ requestId: 3 });
    stream.abort();
  });

  it("poll-driven push: the check function feeds the stream", async () => {
    await start({ pushIntervalMs: 20 });
    const session = await RawSession.open(http.url);
    const stream = session.open(4, "events/stream", { name: "incident.created", params: {}, cursor: null });
    await next(stream.messages, isMethod("notifications/events/active"));
    upstream.log.push({ id: "INC-9", severity: "P2" });
    const event = await next(stream.messages, isMethod("notifications/events/event"));
    expect(event.params).toMatchObject({
      requestId: 4,
      eventId: "INC-9",
      cursor: String(upstream.log.length),
    });
    stream.abort();
  });

  it("revoked authorization sends notifications/events/terminated and the final StreamEventsResult", async () => {
    await start();
    const session = await RawSession.open(http.url);
    const stream = session.open(5, "events/stream", request);
    await next(stream.messages, isMethod("notifications/events/active"));
    hooks.allowed = false;
    await events.recheckAuthorization();
    expect(await next(stream.messages)).toEqual({
      jsonrpc: "2.0",
      method: "notifications/events/terminated",
      params: {
        requestId: 5,
        id: "sub_email",
        error: { code: -32012, message: "Unauthorized", data: { reason: "Access revoked" } },
      },
    });
    expect(await next(stream.messages)).toEqual({ jsonrpc: "2.0", id: 5, result: { _meta: {} } });
    expect(hooks.unsubscribed).toHaveLength(1);
  });

  it("aborting the POST ends the subscription: onUnsubscribe runs and nothing more is sent", async () => {
    await start();
    const session = await RawSession.open(http.url);
    const stream = session.open(6, "events/stream", request);
    await next(stream.messages, isMethod("notifications/events/active"));
    expect(hooks.subscribed).toHaveLength(1);
    stream.abort();
    await until(() => hooks.unsubscribed.length === 1);
    expect(events.liveSubscriptions).toBe(0);
  });

  it("an invalid subscription is answered at once with an error and no stream opens", async () => {
    await start();
    const session = await RawSession.open(http.url);
    expect((await session.request(8, "events/stream", { name: "nope" })).error).toMatchObject({
      code: -32011,
    });
    hooks.allowed = false;
    expect((await session.request(9, "events/stream", request)).error).toMatchObject({ code: -32012 });
    expect(hooks.subscribed).toEqual([]);
  });

  it("a type with push turned off is -32017 DeliveryModeUnsupported", async () => {
    await start();
    events.event({
      name: "poll.only",
      delivery: { push: false },
      check: () => ({ events: [], cursor: "0" }),
    });
    const session = await RawSession.open(http.url);
    expect((await session.request(10, "events/stream", { name: "poll.only" })).error).toMatchObject({
      code: -32017,
      message: "DeliveryModeUnsupported",
    });
  });

  it("sep-3415 streams route by _meta subscriptionId and report truncation on active", async () => {
    await start();
    const session = await RawSession.open(http.url);
    const stream = session.open(11, "events/stream", {
      name: "email.received",
      arguments: {},
      cursor: "gone.1",
    });
    const active = await next(stream.messages);
    expect(active.params).toEqual({
      cursor: expect.any(String),
      truncated: true,
      _meta: { "io.modelcontextprotocol/subscriptionId": 11 },
    });
    stream.abort();
  });
});
