import { createServer } from "node:http";
import { createReceiver, developmentPolicy, generateSecret, type ReceivedWebhook } from "@doorbell/webhooks";
import { getRequestListener } from "@hono/node-server";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createEventsServer, type EventsServer } from "../src/index.js";
import { emailEvent, emailReceived, emitEmail, type Hooks, newHooks } from "./fixtures.js";
import { type Json, type Listening, listen, RawSession, serveEvents, until } from "./harness.js";

let events: EventsServer;
let http: Listening;
let hook: Listening;
let hooks: Hooks;
let offset: number;
let received: ReceivedWebhook[];
let secrets: Map<string, string>;
let answerChallenges: boolean;

const ID = "f47ac10b-58cc-4372-a567-0e02b2c3d479";

beforeEach(async () => {
  hooks = newHooks();
  offset = 0;
  received = [];
  secrets = new Map();
  answerChallenges = true;
  // A real receiver on loopback: X-MCP-* signatures, timestamp window, the challenge echo.
  const receiver = createReceiver({
    scheme: "mcp",
    keys: (_request, hint) => {
      const secret = secrets.get(hint.subscriptionId ?? "");
      return secret ? { secrets: [secret] } : undefined;
    },
    onChallenge: () => answerChallenges,
    handler: (webhook) => {
      received.push(webhook);
    },
  });
  hook = await listen(createServer(getRequestListener(receiver)));
  events = await createEventsServer({
    clock: () => Date.now() + offset,
    webhook: {
      policy: developmentPolicy(),
      ttlMs: 30 * 60_000,
      verifyTimeoutMs: 3_000,
      allowAnonymous: true,
    },
  });
  events.event(emailReceived(hooks));
  http = await serveEvents(events);
});
afterEach(async () => {
  await http.close();
  await events.close();
  await hook.close();
});

function subscribeParams(extra: Json = {}) {
  return {
    id: ID,
    name: "email.received",
    params: { from: "*@anthropic.com" },
    delivery: { mode: "webhook", url: `${hook.url}/hooks/client123` },
    cursor: null,
    ...extra,
  };
}

async function subscribeWithOwnSecret(session: RawSession, id = 2) {
  const secret = generateSecret();
  secrets.set(ID, secret);
  const params = subscribeParams();
  return session.request(id, "events/subscribe", { ...params, delivery: { ...params.delivery, secret } });
}

describe("events/subscribe webhook delivery replays the sketch against a real receiver", () => {
  it("a client-supplied secret: subscribe waits for the challenge, then events arrive signed", async () => {
    const session = await RawSession.open(http.url);
    const { result } = await subscribeWithOwnSecret(session);
    expect(result).toEqual({ id: ID, refreshBefore: expect.any(String) });
    expect(Date.parse((result as { refreshBefore: string }).refreshBefore) - Date.now()).toBeGreaterThan(
      29 * 60_000,
    );
    emitEmail(events, "evt_789", "dsp@anthropic.com");
    emitEmail(events, "evt_not_for_this_filter", "x@example.com");
    await until(() => received.length === 1);
    const [delivery] = received as [ReceivedWebhook];
    expect(delivery.scheme).toBe("mcp");
    expect(delivery.headers.get("x-mcp-signature")).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(delivery.headers.get("x-mcp-subscription-id")).toBe(ID);
    expect(delivery.json).toEqual({
      id: ID,
      ...emailEvent("evt_789", "dsp@anthropic.com"),
      cursor: expect.any(String),
    });
    expect(hooks.subscribed).toEqual([`webhook:${ID}`]);
  });

  it("a server-generated whsec_ secret is returned on creation; delivery starts once the challenge passes", async () => {
    const session = await RawSession.open(http.url);
    const { result } = await session.request(2, "events/subscribe", subscribeParams());
    const { secret } = result as { secret: string };
    expect(secret).toMatch(/^whsec_/);
    secrets.set(ID, secret);
    emitEmail(events, "evt_1", "dsp@anthropic.com");
    await until(() => received.length === 1);
    expect((received[0] as ReceivedWebhook & { json: Json }).json.eventId).toBe("evt_1");
  });

  it("a refresh with the same key resets the TTL, returns no secret and reports deliveryStatus", async () => {
    const session = await RawSession.open(http.url);
    await subscribeWithOwnSecret(session);
    emitEmail(events, "evt_1", "dsp@anthropic.com");
    await until(() => received.length === 1);
    offset = 60_000;
    // The receiver saw the POST before the engine recorded its answer: refresh until it has.
    let refresh: Json = {};
    let requestId = 3;
    await until(async () => {
      refresh = await session.request(requestId++, "events/subscribe", subscribeParams());
      return (refresh.result as { deliveryStatus?: Json }).deliveryStatus?.lastDeliveryAt != null;
    });
    expect(refresh.result).toEqual({
      id: ID,
      refreshBefore: expect.any(String),
      deliveryStatus: { active: true, lastDeliveryAt: expect.any(String), lastError: null },
    });
    expect(hooks.subscribed).toHaveLength(1);
  });

  it("events/unsubscribe stops delivery at once; a second one is -32016 SubscriptionNotFound", async () => {
    const session = await RawSession.open(http.url);
    await subscribeWithOwnSecret(session);
    const url = `${hook.url}/hooks/client123`;
    expect((await session.request(3, "events/unsubscribe", { id: ID, delivery: { url } })).result).toEqual(
      {},
    );
    expect(hooks.unsubscribed).toEqual([`webhook:${ID}`]);
    emitEmail(events, "evt_late", "dsp@anthropic.com");
    const again = await session.request(4, "events/unsubscribe", { id: ID, delivery: { url } });
    expect(again.error).toMatchObject({ code: -32016, message: "SubscriptionNotFound" });
    // The key includes the url: another url with the same id is another subscription.
    expect(received).toEqual([]);
  });

  it("an endpoint that does not echo the challenge is -32015 InvalidCallbackUrl and provisions nothing", async () => {
    answerChallenges = false;
    const session = await RawSession.open(http.url);
    const { error } = await subscribeWithOwnSecret(session);
    expect(error).toEqual({
      code: -32015,
      message: "InvalidCallbackUrl",
      data: { reason: "challenge_failed" },
    });
    expect(hooks.subscribed).toEqual([]);
  });

  it("a URL of the wrong scheme is -32602, one the egress policy refuses -32015 with the reason; a low-entropy id is -32602", async () => {
    const session = await RawSession.open(http.url);
    const wrongScheme = await session.request(
      2,
      "events/subscribe",
      subscribeParams({ delivery: { mode: "webhook", url: "ftp://example.com/x" } }),
    );
    expect(wrongScheme.error).toMatchObject({
      code: -32602,
      data: { field: "delivery.url" },
      message: expect.stringMatching(/delivery\.url: the URL must use https/),
    });
    const refused = await session.request(
      5,
      "events/subscribe",
      subscribeParams({ delivery: { mode: "webhook", url: "http://169.254.169.254/latest" } }),
    );
    expect(refused.error).toMatchObject({
      code: -32015,
      message: "InvalidCallbackUrl",
      data: { reason: expect.stringMatching(/IP address is not allowed/) },
    });
    const short = await session.request(3, "events/subscribe", subscribeParams({ id: "1" }));
    expect(short.error).toMatchObject({ code: -32602 });
    const badSecret = await session.request(
      4,
      "events/subscribe",
      subscribeParams({ delivery: { mode: "webhook", url: `${hook.url}/h`, secret: "hunter2" } }),
    );
    expect(badSecret.error).toMatchObject({ code: -32602 });
    expect(JSON.stringify(badSecret)).not.toContain("hunter2");
    expect(hooks.subscribed).toEqual([]);
  });

  it("revoked authorization posts the signed error envelope and the next refresh is refused", async () => {
    const session = await RawSession.open(http.url);
    await subscribeWithOwnSecret(session);
    hooks.allowed = false;
    await events.recheckAuthorization();
    await until(() => received.length === 1);
    expect(received[0]?.json).toEqual({
      id: ID,
      error: { code: -32012, message: "Unauthorized", data: { reason: "Access revoked" } },
    });
    expect(hooks.unsubscribed).toEqual([`webhook:${ID}`]);
    emitEmail(events, "evt_after", "dsp@anthropic.com");
    const refresh = await session.request(3, "events/subscribe", subscribeParams());
    expect(refresh.error).toMatchObject({ code: -32012, message: "Unauthorized" });
  });

  it("without a refresh the TTL lapses: onUnsubscribe runs and the next subscribe creates anew", async () => {
    const session = await RawSession.open(http.url);
    await session.request(2, "events/subscribe", subscribeParams());
    offset = 30 * 60_000 + 1;
    await events.sweep();
    expect(hooks.unsubscribed).toEqual([`webhook:${ID}`]);
    const again = await session.request(3, "events/subscribe", subscribeParams());
    expect((again.result as { secret?: string }).secret).toMatch(/^whsec_/);
    expect(hooks.subscribed).toHaveLength(2);
  });
});
