import { describe, expect, it } from "vitest";
import {
  detectRequestDialect,
  EVENTS_ERROR_CODES,
  EventsError,
  SUBSCRIPTION_ID_META,
  sep3415,
  sketch,
} from "../src/index.js";

const event = {
  eventId: "evt_001",
  name: "email.received",
  timestamp: "2026-02-19T15:30:00Z",
  data: { messageId: "msg_xyz" },
  cursor: "historyId_99842",
};

describe("one model, two wires", () => {
  it("the error codes are the sketch's -32011..-32017 with their names", () => {
    expect(EVENTS_ERROR_CODES).toMatchObject({
      EventNotFound: -32011,
      DeliveryModeUnsupported: -32017,
      CursorExpired: -32014,
    });
    expect(sketch.error("Unauthorized", { reason: "Access revoked" })).toEqual({
      code: -32012,
      message: "Unauthorized",
      data: { reason: "Access revoked" },
    });
  });

  it("sep-3415 folds them into the five general codes the deployed clients use (-32011..-32015) and maps them back", () => {
    const wire = sep3415.error("SubscriptionNotFound");
    expect(wire).toEqual({ code: -32011, message: "NotFound", data: { kind: "subscription" } });
    expect(sep3415.errorName(wire)).toBe("SubscriptionNotFound");
    // The draft SEP's provisional codes are still understood from older servers.
    expect(sep3415.errorName({ code: -32023, data: { kind: "subscription" } })).toBe("SubscriptionNotFound");
    expect(sep3415.errorName({ code: -32027 })).toBe("InvalidCallbackUrl");
    expect(sep3415.errorName(sep3415.error("EventNotFound"))).toBe("EventNotFound");
  });

  it("a poll result maps seconds to milliseconds and back", () => {
    const outcome = sketch.poll.result.decode({
      id: "sub_email",
      events: [],
      cursor: "c",
      hasMore: false,
      nextPollSeconds: 30,
    });
    expect(outcome.nextPollMs).toBe(30_000);
    expect(sep3415.poll.result.encode(outcome)).toMatchObject({
      nextPollMs: 30_000,
      truncated: false,
      resultType: "complete",
    });
  });

  it("push notifications: requestId in params (sketch), _meta subscriptionId (sep-3415)", () => {
    const model = sketch.stream.event.decode({ requestId: 1, id: "sub_email", ...event });
    expect(sep3415.stream.event.encode(model)).toEqual({ ...event, _meta: { [SUBSCRIPTION_ID_META]: 1 } });
    expect(sep3415.stream.event.decode(sep3415.stream.event.encode(model))).toEqual({ requestId: 1, event });
  });

  it("sep-3415 subscribe requires a whsec_ secret and uses arguments", () => {
    expect(() =>
      sep3415.subscribe.params.decode({ name: "x", delivery: { mode: "webhook", url: "https://h/x" } }),
    ).toThrow(EventsError);
    const q = sep3415.subscribe.params.decode({
      name: "x",
      arguments: { a: 1 },
      delivery: {
        mode: "webhook",
        url: "https://h/x",
        secret: `whsec_${Buffer.alloc(32, 1).toString("base64")}`,
      },
    });
    expect(q).toMatchObject({ params: { a: 1 }, cursor: null });
  });

  it("webhook bodies: the sketch's {id, error} envelope, sep-3415's control envelopes", () => {
    const body = {
      type: "error" as const,
      subscriptionId: "s",
      error: { code: -32012, message: "Unauthorized" },
    };
    expect(sketch.webhook.encode(body)).toEqual({ id: "s", error: body.error });
    expect(sep3415.webhook.encode(body)).toEqual({ type: "terminated", error: body.error });
    expect(sketch.webhook.decode({ type: "verification", id: "s", challenge: "9f86d081884c7d65" })).toEqual({
      type: "verification",
      subscriptionId: "s",
      challenge: "9f86d081884c7d65",
    });
    expect(sep3415.webhook.decode(event, "s")).toEqual({ type: "event", subscriptionId: "s", event });
  });

  it("malformed input is InvalidParams naming the field, never echoing the value", () => {
    try {
      sketch.poll.params.decode({ name: "x", maxEvents: -1 });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(EventsError);
      expect((error as EventsError).message).toContain("maxEvents");
    }
  });

  it("ChatGPT-style webhook requests (arguments, whsec_ secret, no id) are detected as sep-3415", () => {
    expect(
      detectRequestDialect({ name: "x", arguments: {}, delivery: { url: "u", secret: "whsec_x" } }),
    ).toBe("sep-3415");
    expect(detectRequestDialect({ id: "a", name: "x", delivery: { url: "u" } })).toBe("sketch");
    expect(detectRequestDialect({ name: "x" })).toBeUndefined();
  });
});
