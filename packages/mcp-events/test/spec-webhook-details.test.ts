import { createServer } from "node:http";
import {
  type ChallengeRequest,
  createReceiver,
  developmentPolicy,
  generateSecret,
  type ReceivedWebhook,
} from "@doorbell/webhooks";
import { getRequestListener } from "@hono/node-server";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createEventsServer, type EventsServer } from "../src/index.js";
import { emailReceived, type Hooks, incidentCreated, newHooks } from "./fixtures.js";
import { type Json, type Listening, listen, RawSession, serveEvents, until } from "./harness.js";

/** The URL of a loopback port nothing listens on (it was free a moment ago). */
async function freePortUrl(): Promise<string> {
  const probe = await listen(createServer());
  await probe.close();
  return probe.url;
}

// SEP-3415's webhook details: the callback URL's own mistakes are InvalidParams, an endpoint that
// cannot be reached says so, verification is cached per (principal, url), and `maxAgeMs` bounds
// what a check-function subscription starts with.
let events: EventsServer;
let http: Listening;
let hook: Listening;
let hooks: Hooks;
let received: ReceivedWebhook[];
let challenges: ChallengeRequest[];
const upstream = { log: [] as { id: string; severity: string }[], compactedBefore: 0 };
const secret = generateSecret();

beforeEach(async () => {
  hooks = newHooks();
  received = [];
  challenges = [];
  upstream.log = [];
  const receiver = createReceiver({
    scheme: "standard",
    keys: { secrets: [secret] },
    onChallenge: (challenge) => {
      challenges.push(challenge);
      return true;
    },
    handler: (webhook) => {
      received.push(webhook);
    },
  });
  hook = await listen(createServer(getRequestListener(receiver)));
  events = await createEventsServer({
    pushIntervalMs: 50,
    webhook: { policy: developmentPolicy(), verifyTimeoutMs: 1_000, allowAnonymous: true },
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

async function subscribe(params: Json): Promise<Json> {
  const session = await RawSession.open(http.url);
  return session.request(2, "events/subscribe", {
    name: "incident.created",
    arguments: {},
    delivery: { mode: "webhook", url: `${hook.url}/hooks/agent`, secret },
    cursor: null,
    ...params,
  });
}

describe("SEP-3415 webhook details", () => {
  it("an unreachable endpoint is a connection failure, not a failed challenge", async () => {
    const answer = await subscribe({
      delivery: { mode: "webhook", url: `${await freePortUrl()}/hooks`, secret },
    });
    expect(answer.error).toMatchObject({ code: -32015, data: { reason: "connection_refused" } });
  });

  it("an endpoint that answers the challenge wrong is challenge_failed", async () => {
    const wrong = await listen(createServer((_req, res) => res.writeHead(200).end('{"challenge":"no"}')));
    try {
      const answer = await subscribe({ delivery: { mode: "webhook", url: `${wrong.url}/hooks`, secret } });
      expect(answer.error).toMatchObject({ code: -32015, data: { reason: "challenge_failed" } });
    } finally {
      await wrong.close();
    }
  });

  it("verification is cached per (principal, url): a second subscription to the same URL is not challenged again", async () => {
    expect((await subscribe({ arguments: { severity: "P1" } })).error).toBeUndefined();
    expect((await subscribe({ arguments: { severity: "P2" } })).error).toBeUndefined();
    expect(challenges).toHaveLength(1);
    // Another URL is another verification.
    expect(
      (await subscribe({ delivery: { mode: "webhook", url: `${hook.url}/hooks/other`, secret } })).error,
    ).toBeUndefined();
    expect(challenges).toHaveLength(2);
  });

  it("maxAgeMs: a check-function subscription starts with the events that young, not older ones", async () => {
    const now = Date.now();
    const at = (ms: number) => new Date(now - ms).toISOString();
    const check = incidentCreated(upstream).check;
    // The upstream's history: an old incident and a recent one, both after the cursor given.
    events.removeEvent("incident.created");
    events.event({
      ...incidentCreated(upstream),
      check: (ctx, params, cursor, options) => {
        const result = check(ctx, params, cursor, options);
        return {
          ...result,
          events: result.events.map((event) => ({
            ...event,
            timestamp: event.eventId === "old" ? at(3_600_000) : at(1_000),
          })),
        };
      },
    });
    upstream.log.push({ id: "old", severity: "P1" }, { id: "recent", severity: "P1" });
    const answer = await subscribe({ cursor: "0", maxAgeMs: 60_000 });
    expect(answer.error).toBeUndefined();
    await until(() => received.length === 1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(received.map((webhook) => webhook.id)).toEqual(["recent"]);
  });
});
