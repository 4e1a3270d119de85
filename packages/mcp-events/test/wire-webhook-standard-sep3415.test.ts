import { createServer } from "node:http";
import {
  type ChallengeRequest,
  createReceiver,
  developmentPolicy,
  generateSecret,
  MCP_SUBSCRIPTION_ID,
  type ReceivedWebhook,
} from "@doorbell/webhooks";
import { getRequestListener } from "@hono/node-server";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createEventsServer, type EventsServer } from "../src/index.js";
import { emailEvent, emailReceived, emitEmail, type Hooks, incidentCreated, newHooks } from "./fixtures.js";
import { type Json, type Listening, listen, RawSession, serveEvents, until } from "./harness.js";

// SEP-3415 subscribers get SEP-3415 deliveries: Standard Webhooks headers (webhook-id = eventId,
// X-MCP-Subscription-Id = the server-derived id), bare EventOccurrence bodies and control envelopes.
let events: EventsServer;
let http: Listening;
let hook: Listening;
let hooks: Hooks;
let received: ReceivedWebhook[];
let challenges: { challenge: ChallengeRequest; subscriptionId: string | null }[];
const upstream = { log: [] as { id: string; severity: string }[], compactedBefore: 0 };
const secret = generateSecret();

beforeEach(async () => {
  hooks = newHooks();
  received = [];
  challenges = [];
  upstream.log = [];
  upstream.compactedBefore = 0;
  // A plain Standard Webhooks receiver: it knows nothing of MCP beyond the challenge echo.
  const receiver = createReceiver({
    scheme: "standard",
    keys: { secrets: [secret] },
    onChallenge: (challenge, request) => {
      challenges.push({ challenge, subscriptionId: request.headers.get(MCP_SUBSCRIPTION_ID) });
      return true;
    },
    handler: (webhook) => {
      received.push(webhook);
    },
  });
  hook = await listen(createServer(getRequestListener(receiver)));
  events = await createEventsServer({
    pushIntervalMs: 50,
    webhook: {
      policy: developmentPolicy(),
      ttlMs: 30 * 60_000,
      verifyTimeoutMs: 3_000,
      allowAnonymous: true,
    },
  });
  events.event(emailReceived(hooks));
  events.event(incidentCreated(upstream));
  http = await serveEvents(events);
});
afterEach(async () => {
  await http.close();
  await events.close();
  await hook.close();
});

async function subscribe(name: string, args: Json, cursor: string | null = null): Promise<Json> {
  const session = await RawSession.open(http.url);
  const answer = await session.request(2, "events/subscribe", {
    name,
    arguments: args,
    delivery: { mode: "webhook", url: `${hook.url}/hooks/agent`, secret },
    cursor,
  });
  expect(answer.error).toBeUndefined();
  return answer.result as Json;
}

describe("a sep-3415 subscriber's webhooks are Standard Webhooks", () => {
  it("the challenge is SEP-3415's {type, challenge}, events carry webhook-id = eventId and X-MCP-Subscription-Id", async () => {
    const result = await subscribe("email.received", { from: "*@anthropic.com" });
    expect(result.id).toMatch(/^sub_/);
    expect(challenges).toEqual([
      {
        challenge: { kind: "mcp-events", challenge: expect.any(String) },
        subscriptionId: result.id,
      },
    ]);
    emitEmail(events, "evt_789", "dsp@anthropic.com");
    await until(() => received.length === 1);
    const [webhook] = received;
    expect(webhook?.scheme).toBe("standard");
    expect(webhook?.id).toBe("evt_789");
    expect(webhook?.headers.get(MCP_SUBSCRIPTION_ID)).toBe(result.id);
    expect(webhook?.headers.get("x-mcp-signature")).toBeNull();
    expect(webhook?.json).toEqual({
      ...emailEvent("evt_789", "dsp@anthropic.com"),
      cursor: expect.any(String),
    });
  });

  it("revoked authorization posts the signed {type: terminated, error} envelope", async () => {
    await subscribe("email.received", {});
    hooks.allowed = false;
    await events.recheckAuthorization();
    await until(() => received.length === 1);
    expect(received[0]?.json).toEqual({
      type: "terminated",
      error: { code: -32012, message: "Forbidden", data: { reason: "Access revoked" } },
    });
  });

  it("an expired cursor becomes a {type: gap} envelope carrying the fresh cursor, then delivery goes on", async () => {
    upstream.log.push({ id: "inc1", severity: "P1" }, { id: "inc2", severity: "P1" });
    upstream.compactedBefore = 2;
    await subscribe("incident.created", {}, "0");
    await until(() => received.length === 1);
    expect(received[0]?.json).toEqual({ type: "gap", cursor: "2" });
    upstream.log.push({ id: "inc3", severity: "P2" });
    await until(() => received.length === 2);
    expect(received[1]?.json).toMatchObject({ eventId: "inc3", cursor: "3" });
  });
});
