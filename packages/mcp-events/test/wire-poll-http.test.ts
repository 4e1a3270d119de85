import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createEventsServer, type EventsServer } from "../src/index.js";
import { emailEvent, emailReceived, emitEmail, type Hooks, incidentCreated, newHooks } from "./fixtures.js";
import { type Listening, RawSession, serveEvents } from "./harness.js";

let events: EventsServer;
let http: Listening;
let hooks: Hooks;
let now: number;
const upstream = { log: [] as { id: string; severity: string }[], compactedBefore: 0 };

async function start(options: Parameters<typeof createEventsServer>[0] = {}) {
  now = Date.parse("2026-02-19T15:00:00Z");
  events = await createEventsServer({ clock: () => now, ...options });
  events.event(emailReceived(hooks));
  events.event(incidentCreated(upstream));
  http = await serveEvents(events);
}

beforeEach(async () => {
  hooks = newHooks();
  upstream.log = [];
  upstream.compactedBefore = 0;
});
afterEach(async () => {
  await http?.close();
  await events?.close();
});

const poll = {
  id: "sub_email",
  name: "email.received",
  params: { from: "*@anthropic.com", redact_pii: true },
};

describe("events/poll over Streamable HTTP replays the sketch", () => {
  it("declares the events capability top-level and under extensions", async () => {
    await start();
    const response = await new RawSession(`${http.url}/mcp`).post({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    });
    const text = await response.text();
    expect(text).toContain('"events":{"listChanged":true}');
    expect(text).toContain('"io.modelcontextprotocol/events":{"listChanged":true}');
  });

  it("events/list describes each type with delivery modes, inputSchema and payloadSchema", async () => {
    await start();
    const session = await RawSession.open(http.url);
    const { result } = await session.request(1, "events/list", {});
    const [email] = (result as { events: Record<string, unknown>[] }).events;
    expect(email).toMatchObject({
      name: "email.received",
      description: "Fires when a new email arrives in the inbox",
      delivery: ["poll", "push"],
      payloadSchema: { type: "object" },
    });
    expect((email as { inputSchema: { properties: object } }).inputSchema.properties).toHaveProperty(
      "redact_pii",
    );
  });

  it("a null cursor starts from now; the next poll returns the sketch's response shape", async () => {
    await start();
    const session = await RawSession.open(http.url);
    emitEmail(events, "evt_000", "before@anthropic.com");
    const first = await session.request(2, "events/poll", { ...poll, cursor: null, maxEvents: 50 });
    const bootstrap = first.result as { cursor: string };
    expect(first.result).toEqual({
      id: "sub_email",
      events: [],
      cursor: bootstrap.cursor,
      hasMore: false,
      nextPollSeconds: 30,
    });

    emitEmail(events, "evt_001", "dsp@anthropic.com");
    emitEmail(events, "evt_002", "someone@example.com");
    const second = await session.request(3, "events/poll", {
      ...poll,
      cursor: bootstrap.cursor,
      maxEvents: 50,
    });
    expect(second.result).toEqual({
      id: "sub_email",
      events: [emailEvent("evt_001", "[redacted]")],
      cursor: expect.any(String),
      hasMore: false,
      nextPollSeconds: 30,
    });
  });

  it("maxEvents caps the batch and hasMore asks for an immediate poll", async () => {
    await start();
    const session = await RawSession.open(http.url);
    const { result } = await session.request(1, "events/poll", { name: "email.received", cursor: null });
    for (const id of ["a1", "a2", "a3"]) emitEmail(events, id, "x@anthropic.com");
    const page1 = (
      await session.request(2, "events/poll", {
        name: "email.received",
        cursor: (result as { cursor: string }).cursor,
        maxEvents: 2,
      })
    ).result as { events: { eventId: string }[]; cursor: string; hasMore: boolean };
    expect(page1.events.map((e) => e.eventId)).toEqual(["a1", "a2"]);
    expect(page1.hasMore).toBe(true);
    const page2 = (
      await session.request(3, "events/poll", { name: "email.received", cursor: page1.cursor, maxEvents: 2 })
    ).result as { events: { eventId: string }[]; hasMore: boolean };
    expect(page2.events.map((e) => e.eventId)).toEqual(["a3"]);
    expect(page2.hasMore).toBe(false);
  });

  it("a check function serves poll: bootstrap, events since the cursor, hasMore", async () => {
    await start();
    const session = await RawSession.open(http.url);
    const boot = (
      await session.request(1, "events/poll", { name: "incident.created", params: {}, cursor: null })
    ).result as { cursor: string };
    upstream.log.push(
      { id: "INC-1", severity: "P1" },
      { id: "INC-2", severity: "P3" },
      { id: "INC-3", severity: "P1" },
    );
    const r = (
      await session.request(2, "events/poll", {
        name: "incident.created",
        params: { severity: "P1" },
        cursor: boot.cursor,
        maxEvents: 1,
      })
    ).result as { events: { eventId: string }[]; hasMore: boolean; cursor: string };
    expect(r.events.map((e) => e.eventId)).toEqual(["INC-1"]);
    expect(r.hasMore).toBe(true);
    expect(r.cursor).toBe("1");
  });

  it("the sep-3415 dialect is answered in kind: arguments in, nextPollMs and truncated out", async () => {
    await start();
    const session = await RawSession.open(http.url);
    const { result } = await session.request(1, "events/poll", {
      name: "email.received",
      arguments: {},
      cursor: null,
    });
    expect(result).toMatchObject({
      events: [],
      hasMore: false,
      truncated: false,
      nextPollMs: 30_000,
      resultType: "complete",
    });
  });
});

describe("events/poll failure paths change nothing and say exactly what is wrong", () => {
  it("an unknown event name is -32011 EventNotFound", async () => {
    await start();
    const session = await RawSession.open(http.url);
    const { error } = await session.request(1, "events/poll", { name: "nope", cursor: null });
    expect(error).toEqual({ code: -32011, message: "EventNotFound", data: { name: "nope" } });
    expect(hooks.subscribed).toEqual([]);
  });

  it("params that do not match the inputSchema are -32602 naming the field", async () => {
    await start();
    const session = await RawSession.open(http.url);
    const { error } = (await session.request(1, "events/poll", {
      name: "email.received",
      params: { redact_pii: "yes" },
    })) as { error: { code: number; message: string } };
    expect(error.code).toBe(-32602);
    expect(error.message).toContain("redact_pii");
    const missing = (await session.request(2, "events/poll", { params: {} })) as {
      error: { code: number; message: string };
    };
    expect(missing.error.code).toBe(-32602);
    expect(missing.error.message).toContain("name");
    expect(hooks.subscribed).toEqual([]);
  });

  it("a cursor from another process is -32014 CursorExpired (sketch) and truncated (sep-3415)", async () => {
    await start();
    const session = await RawSession.open(http.url);
    const { error } = await session.request(1, "events/poll", {
      name: "email.received",
      params: {},
      cursor: "elsewhere.5",
    });
    expect(error).toMatchObject({ code: -32014, message: "CursorExpired" });
    const sep = await session.request(2, "events/poll", {
      name: "email.received",
      arguments: {},
      cursor: "elsewhere.5",
    });
    expect(sep.result).toMatchObject({ events: [], truncated: true });
  });

  it("an upstream compaction surfaces as -32014 from a check function", async () => {
    await start();
    upstream.log.push({ id: "INC-1", severity: "P1" });
    upstream.compactedBefore = 1;
    const session = await RawSession.open(http.url);
    const { error } = await session.request(1, "events/poll", { name: "incident.created", cursor: "0" });
    expect(error).toEqual({
      code: -32014,
      message: "CursorExpired",
      data: { reason: "Upstream history compacted" },
    });
  });

  it("TooManySubscriptions (-32013) is checked before onSubscribe runs", async () => {
    await start({ limits: { total: 1 } });
    const session = await RawSession.open(http.url);
    await session.request(1, "events/poll", { name: "email.received", params: { from: "a*" }, cursor: null });
    const { error } = await session.request(2, "events/poll", {
      name: "email.received",
      params: { from: "b*" },
      cursor: null,
    });
    expect(error).toMatchObject({ code: -32013, message: "TooManySubscriptions" });
    expect(hooks.subscribed).toHaveLength(1);
  });

  it("poll leases: onSubscribe once per (principal, name, params), onUnsubscribe when the lease lapses", async () => {
    await start({ pollLeaseMs: 60_000 });
    const session = await RawSession.open(http.url);
    await session.request(1, "events/poll", {
      id: "a",
      name: "email.received",
      params: { from: "x" },
      cursor: null,
    });
    await session.request(2, "events/poll", {
      id: "b",
      name: "email.received",
      params: { from: "x" },
      cursor: null,
    });
    expect(hooks.subscribed).toHaveLength(1);
    now += 59_000;
    await events.sweep();
    expect(hooks.unsubscribed).toHaveLength(0);
    await session.request(3, "events/poll", { name: "email.received", params: { from: "x" }, cursor: null });
    now += 60_001;
    await events.sweep();
    expect(hooks.unsubscribed).toEqual(hooks.subscribed);
  });

  it("revoked authorization ends the poll lease and the next poll is -32012 Unauthorized", async () => {
    await start();
    const session = await RawSession.open(http.url);
    await session.request(1, "events/poll", { name: "email.received", params: {}, cursor: null });
    hooks.allowed = false;
    await events.recheckAuthorization();
    expect(hooks.unsubscribed).toEqual(hooks.subscribed);
    const { error } = await session.request(2, "events/poll", {
      name: "email.received",
      params: {},
      cursor: null,
    });
    expect(error).toEqual({ code: -32012, message: "Unauthorized", data: { reason: "Access revoked" } });
  });

  it("without webhook configured events/subscribe is -32017 DeliveryModeUnsupported", async () => {
    await start();
    const session = await RawSession.open(http.url);
    const { error } = await session.request(1, "events/subscribe", {
      id: "f47ac10b-58cc-4372-a567-0e02b2c3d479",
      name: "email.received",
      delivery: { mode: "webhook", url: "https://example.com/hook" },
    });
    expect(error).toMatchObject({ code: -32017, message: "DeliveryModeUnsupported" });
  });
});
