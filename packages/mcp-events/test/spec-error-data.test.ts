// SEP-3415's typed error data, over a real server on loopback: ResourceExhausted names the limit
// in `data.limit` and gives its number in `data.max`; Unsupported names the feature and the value
// it refused (`delivery.mode`, "webhook").
import { generateSecret } from "@doorbell/webhooks";
import { afterEach, describe, expect, it } from "vitest";
import { createEventsServer, EventsError, type EventsServer, sep3415 } from "../src/index.js";
import { type Json, type Listening, RawSession, serveEvents } from "./harness.js";

let events: EventsServer;
let http: Listening;

afterEach(async () => {
  await http?.close();
  await events?.close();
});

async function start(options: Parameters<typeof createEventsServer>[0] = {}): Promise<RawSession> {
  events = await createEventsServer(options);
  events.event({ name: "ping.sent" });
  events.event({ name: "pong.sent", delivery: { push: false } });
  http = await serveEvents(events);
  return RawSession.open(http.url);
}

/** A SEP-3415 poll (its `arguments` say so) of `ping.sent` with these arguments. */
const poll = (session: RawSession, id: number, args: Json) =>
  session.request(id, "events/poll", { name: "ping.sent", arguments: args, cursor: null });

describe("ResourceExhausted: data.limit is the limit's name, data.max its number", () => {
  it("the per-principal limit", async () => {
    const session = await start({ limits: { perPrincipal: 1 } });
    expect((await poll(session, 1, { a: 1 })).error).toBeUndefined();
    expect((await poll(session, 2, { a: 2 })).error).toEqual({
      code: -32013,
      message: "ResourceExhausted",
      data: { limit: "subscriptions per principal", max: 1 },
    });
  });

  it("the server's total", async () => {
    const session = await start({ limits: { total: 1 } });
    await poll(session, 1, { a: 1 });
    expect((await poll(session, 2, { a: 2 })).error).toEqual({
      code: -32013,
      message: "ResourceExhausted",
      data: { limit: "subscriptions", max: 1 },
    });
  });

  it("an author's bare number becomes the max of an unnamed limit; the sketch keeps the model's data", () => {
    expect(sep3415.error("TooManySubscriptions", { limit: 5 })).toEqual({
      code: -32013,
      message: "ResourceExhausted",
      data: { limit: "subscriptions", max: 5 },
    });
    expect(
      new EventsError("TooManySubscriptions", { limit: "subscriptions per principal", max: 5 }).data,
    ).toEqual({ limit: "subscriptions per principal", max: 5 });
  });
});

describe("Unsupported: data.feature and data.value", () => {
  it("events/subscribe on a server without webhook delivery: delivery.mode webhook", async () => {
    const session = await start();
    const { error } = await session.request(1, "events/subscribe", {
      name: "ping.sent",
      arguments: {},
      delivery: { mode: "webhook", url: "https://example.com/hooks", secret: generateSecret() },
      cursor: null,
    });
    expect(error).toEqual({
      code: -32014,
      message: "Unsupported",
      data: { feature: "delivery.mode", value: "webhook" },
    });
  });

  it("events/stream of a type with push turned off: delivery.mode push, and which type", async () => {
    const session = await start();
    const { error } = await session.request(1, "events/stream", {
      name: "pong.sent",
      arguments: {},
      cursor: null,
    });
    expect(error).toEqual({
      code: -32014,
      message: "Unsupported",
      data: { feature: "delivery.mode", value: "push", name: "pong.sent" },
    });
  });

  it("a client still tells an expired cursor from an unsupported mode by the feature", () => {
    const expired = sep3415.error("CursorExpired", { reason: "compacted" });
    expect(expired.data).toEqual({ feature: "cursor", reason: "compacted" });
    expect(sep3415.errorName(expired)).toBe("CursorExpired");
    expect(sep3415.errorName(sep3415.error("DeliveryModeUnsupported", { mode: "push" }))).toBe(
      "DeliveryModeUnsupported",
    );
  });
});
