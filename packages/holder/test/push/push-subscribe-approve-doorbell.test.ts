// Push profile 0.4 on the holder, through a real MCP client and a real agent endpoint on loopback:
// §4.1 subscribe and renew, §6 rule 2 (challenge first), rule 3 (the person approves, by a link
// sent to the verified channel, never through the agent), §5 (the doorbell carries exactly
// subscriptionId/newMatches/latestDeliveredAt), §8.2 (nextCheckAfter), and the agent reading the
// new match with since.

import { notificationProblem, subscriptionProblem } from "@doorbell/intents";
import { forEachEngine } from "@doorbell/store/testing";
import { generateSecret } from "@doorbell/webhooks";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INTENT_END_GRACE_MS } from "../../src/push/rows.js";
import {
  activeIntent,
  MINUTE,
  octavia,
  ok,
  type Published,
  refused,
  startHolder,
  type TestHolder,
} from "../support/mcp-harness.js";
import { type AgentEndpoint, startAgentEndpoint } from "../support/push-endpoint.js";

interface PushAnswer {
  specVersion: string;
  type: string;
  subscriptionId: string;
  status: string;
  approval?: string;
  events: string[];
  expiresAt: string;
  refreshBefore: string;
  endedReason?: string;
}

/** The approval link the holder mailed to the person (the agent never sees it). */
async function approvalLink(h: TestHolder, email: string): Promise<string> {
  const mails = await h.ctx.mailbox.listMailbox({ to: email, limit: 20 });
  const mail = mails.find((entry) => entry.subject.startsWith("Allow an assistant"));
  const token = mail === undefined ? undefined : /\/notifications\/([0-9A-Za-z]+)/.exec(mail.text)?.[1];
  if (token === undefined) throw new Error("no approval mail");
  return token;
}

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let h: TestHolder;
  let agent: Client;
  let endpoint: AgentEndpoint;
  let published: Published;
  let subscription: PushAnswer;
  const email = "pushy.person@example.sk";

  beforeAll(async () => {
    h = await startHolder(engine, { push: true });
    endpoint = await startAgentEndpoint(h.clock.now);
    agent = await h.connect();
    published = await activeIntent(h, agent, email);
  });
  afterAll(async () => {
    await h.close();
    await endpoint.close();
  });

  const runDue = () => (h.delivery as NonNullable<TestHolder["delivery"]>).runDue();

  it("answers in the §9 push-subscription shape and sends nothing but the challenge first", async () => {
    subscription = await ok<PushAnswer>(agent, "intent_subscribe_events", {
      intentCode: published.intentCode,
      delivery: { url: endpoint.url, secret: endpoint.secret },
    });
    expect(subscription).toMatchObject({
      specVersion: "0.4",
      type: "push-subscription",
      status: "awaiting_verification",
      approval: "sent-to-verified-channel",
      events: ["intent.matches.delivered", "intent.status.changed"],
    });
    expect(subscription.subscriptionId).toMatch(/^sub_[A-Za-z0-9]{24}$/);
    expect(subscriptionProblem(subscription)).toBeUndefined();
    // A 30-day lease, renewal due in its last tenth (3 days before the end, as in §9).
    expect(Date.parse(subscription.expiresAt) - h.clock.now()).toBe(30 * 24 * 60 * MINUTE);
    expect(Date.parse(subscription.expiresAt) - Date.parse(subscription.refreshBefore)).toBe(
      3 * 24 * 60 * MINUTE,
    );
    await runDue();
    expect(endpoint.types()).toEqual(["subscription.verification"]);
    expect(endpoint.doorbells).toEqual([]);
    const after = await h.services.push?.view(
      { kind: "intent-code", intentId: published.intent.id },
      subscription.subscriptionId,
    );
    expect(after?.status).toBe("awaiting_person_approval");
  });

  it("rings nothing for a match until the person allowed it from the link in their e-mail", async () => {
    await h.services.offers.importCatalogue([octavia()]);
    await runDue();
    expect(endpoint.of("intent.matches.delivered")).toHaveLength(0);

    const token = await approvalLink(h, email);
    const view = await h.services.push?.approvalView(token);
    expect(view?.receipt).toMatchObject({ deliveryHost: "127.0.0.1", status: "awaiting_person_approval" });
    await h.services.push?.approveByToken(token);
    await runDue();
    // The match recorded before approval is rung when the person allows it: one doorbell now.
    const [doorbell] = endpoint.of("intent.matches.delivered");
    expect(doorbell?.data).toEqual({
      subscriptionId: subscription.subscriptionId,
      newMatches: 1,
      latestDeliveredAt: expect.any(String),
    });
    expect(notificationProblem(JSON.parse(doorbell?.body ?? "{}"))).toBeUndefined();
    // A doorbell, not a letter: no code, statement, offer, url or price anywhere in the bytes.
    for (const leak of [published.intentCode, "Octavia", "cars.example.sk", "13900", email, endpoint.url]) {
      expect(doorbell?.body).not.toContain(leak);
    }
  });

  it("lets the agent read exactly the new match with since, and says when to look again (§8.2)", async () => {
    const [doorbell] = endpoint.of("intent.matches.delivered");
    const read = await ok<{ matches: { deliveredAt: string }[]; nextCheckAfter: string }>(
      agent,
      "intent_list_matches",
      { intentCode: published.intentCode },
    );
    expect(read.matches).toHaveLength(1);
    expect(read.matches[0]?.deliveredAt).toBe(doorbell?.data.latestDeliveredAt);
    expect(Date.parse(read.nextCheckAfter) - h.clock.now()).toBe(15 * MINUTE);
    const since = await ok<{ matches: unknown[] }>(agent, "intent_list_matches", {
      intentCode: published.intentCode,
      since: read.matches[0]?.deliveredAt,
    });
    expect(since.matches).toEqual([]);
  });

  it("renews with the same code and url: same subscriptionId, new lease, the new secret proven by a challenge", async () => {
    h.clock.advance(10 * MINUTE);
    const newSecret = generateSecret();
    endpoint.control.secrets = [newSecret, endpoint.secret];
    const renewed = await ok<PushAnswer>(agent, "intent_subscribe_events", {
      intentCode: published.intentCode,
      delivery: { url: endpoint.url, secret: newSecret },
    });
    expect(renewed.subscriptionId).toBe(subscription.subscriptionId);
    expect(renewed.status).toBe("active");
    // The lease is capped by the intent: it ends 10 minutes after validUntil (30 days from
    // publishing), so the intent's own end (status changed, then ended intent-expired) comes first.
    const intent = await ok<{ validUntil: string }>(agent, "intent_get_intent", {
      intentCode: published.intentCode,
    });
    expect(renewed.expiresAt).toBe(
      new Date(Date.parse(intent.validUntil) + INTENT_END_GRACE_MS).toISOString(),
    );
    expect(Date.parse(renewed.refreshBefore)).toBeGreaterThan(Date.parse(subscription.refreshBefore));
    const count = () => endpoint.types().filter((type) => type === "subscription.verification").length;
    const before = count();
    await runDue();
    expect(count()).toBe(before + 1);
    // The new challenge is signed with the new secret only.
    endpoint.control.secrets = [newSecret];
    h.clock.advance(16 * MINUTE);
    await h.services.offers.importCatalogue([octavia()]);
    await runDue();
    expect(endpoint.of("intent.matches.delivered")).toHaveLength(2);
  });

  it("makes a different url a new subscription, and refuses a fourth (§6 rule 6)", async () => {
    const second = await ok<PushAnswer>(agent, "intent_subscribe_events", {
      intentCode: published.intentCode,
      delivery: { url: `${endpoint.url}/two`, secret: generateSecret() },
      events: ["intent.status.changed"],
    });
    expect(second.subscriptionId).not.toBe(subscription.subscriptionId);
    expect(second.events).toEqual(["intent.status.changed"]);
    await ok(agent, "intent_subscribe_events", {
      intentCode: published.intentCode,
      delivery: { url: `${endpoint.url}/three`, secret: generateSecret() },
    });
    const fourth = await refused(agent, "intent_subscribe_events", {
      intentCode: published.intentCode,
      delivery: { url: `${endpoint.url}/four`, secret: generateSecret() },
    });
    expect(fourth.code).toBe("ERR_HOLDER_CONFLICT");
    expect(fourth.text).toMatch(/at most|most allowed/);
    const gone = await ok<PushAnswer>(agent, "intent_unsubscribe_events", {
      intentCode: published.intentCode,
      subscriptionId: second.subscriptionId,
    });
    expect(gone).toMatchObject({ status: "ended", endedReason: "unsubscribed" });
  });

  it("refuses undeclared arguments, a bad secret, a bad relayFor and another intent's subscription", async () => {
    const base = {
      intentCode: published.intentCode,
      delivery: { url: `${endpoint.url}/x`, secret: generateSecret() },
    };
    const extra = await refused(agent, "intent_subscribe_events", { ...base, email: "a@b.c" });
    expect(extra.text).toMatch(/undeclared argument "email"/);
    const nested = await refused(agent, "intent_subscribe_events", {
      ...base,
      delivery: { ...base.delivery, headers: { a: 1 } },
    });
    expect(nested.text).toMatch(/undeclared argument "headers"/);
    const secret = await refused(agent, "intent_subscribe_events", {
      ...base,
      delivery: { url: base.delivery.url, secret: "hunter2" },
    });
    expect(secret.text).toMatch(/whsec_/);
    expect(secret.text).not.toContain("hunter2");
    const relay = await refused(agent, "intent_subscribe_events", { ...base, relayFor: "not a host!" });
    expect(relay.text).toMatch(/relayFor/);
    const scheme = await refused(agent, "intent_subscribe_events", {
      ...base,
      delivery: { url: "ftp://example.sk/x", secret: generateSecret() },
    });
    expect(scheme.text).toMatch(/delivery\.url is refused/);

    const other = await activeIntent(h, agent, "someone.else@example.sk");
    const foreign = await refused(agent, "intent_unsubscribe_events", {
      intentCode: other.intentCode,
      subscriptionId: subscription.subscriptionId,
    });
    expect(foreign.code).toBe("ERR_HOLDER_NOT_FOUND");
  });

  it("ends every subscription when the intent is withdrawn, telling the agent once (§4.2)", async () => {
    const endedBefore = endpoint.of("subscription.ended").length;
    await ok(agent, "intent_withdraw_intent", { intentCode: published.intentCode });
    await runDue();
    const ended = endpoint.of("subscription.ended").slice(endedBefore);
    expect(ended.map((doorbell) => doorbell.data)).toContainEqual({
      subscriptionId: subscription.subscriptionId,
      reason: "intent-withdrawn",
    });
    // Every request the endpoint ever got (challenges, doorbells, endings) fits the schema.
    expect(endpoint.requests.length).toBeGreaterThanOrEqual(5);
    for (const request of endpoint.requests)
      expect(notificationProblem(JSON.parse(request.body))).toBeUndefined();
    const refusedAfter = await refused(agent, "intent_subscribe_events", {
      intentCode: published.intentCode,
      delivery: { url: endpoint.url, secret: generateSecret() },
    });
    expect(refusedAfter.code).toBe("ERR_HOLDER_GONE");
  });
});
