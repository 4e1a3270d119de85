// Push profile §6 rules 2, 5, 6 and 7 as the holder applies them, on a fake clock with a real agent
// endpoint on loopback: matches doorbells coalesce per 15 minutes adding up newMatches (rule 6),
// 410 ends the subscription at once and retries end it with delivery-failed after 24 hours
// (rule 5), three failed challenges end it (rule 2), the lease ends it and the holder forgets it
// once the engine purged it (rule 7). The engine's own tests pin each rule in detail; these show
// the holder wired to them.
import { forEachEngine } from "@doorbell/store/testing";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Principal } from "../../src/model/types.js";
import {
  activeIntent,
  HOUR,
  MINUTE,
  octavia,
  ok,
  type Published,
  startHolder,
  type TestHolder,
} from "../support/mcp-harness.js";
import { type AgentEndpoint, startAgentEndpoint } from "../support/push-endpoint.js";

const DAY = 24 * HOUR;

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let h: TestHolder;
  let agent: Client;
  let endpoint: AgentEndpoint;
  let n = 0;
  const runDue = () => (h.delivery as NonNullable<TestHolder["delivery"]>).runDue();

  beforeAll(async () => {
    h = await startHolder(engine, { push: { purgeAfterMs: DAY } });
    endpoint = await startAgentEndpoint(h.clock.now);
    agent = await h.connect();
  });
  afterAll(async () => {
    await h.close();
    await endpoint.close();
  });
  beforeEach(() => {
    endpoint.control.status = 0;
  });

  /** An active intent with one verified, approved subscription to the endpoint. */
  async function subscribed(): Promise<{ published: Published; id: string; principal: Principal }> {
    n += 1;
    const published = await activeIntent(h, agent, `rules-${n}@example.sk`);
    // Later than the activation: what it delivered (earlier tests' offers) came before the
    // subscription, and the person's approval does not ring for it.
    h.clock.advance(MINUTE);
    const { subscriptionId } = await ok<{ subscriptionId: string }>(agent, "intent_subscribe_events", {
      intentCode: published.intentCode,
      delivery: { url: `${endpoint.url}/${n}`, secret: endpoint.secret },
    });
    await runDue();
    await h.services.push?.approve(published.intent.id, subscriptionId);
    await runDue();
    return {
      published,
      id: subscriptionId,
      principal: { kind: "intent-code", intentId: published.intent.id },
    };
  }

  const matchesOf = (id: string) =>
    endpoint.of("intent.matches.delivered").filter((doorbell) => doorbell.data.subscriptionId === id);
  const endedOf = (id: string) =>
    endpoint.of("subscription.ended").filter((doorbell) => doorbell.data.subscriptionId === id);

  it("rule 6: the first match rings at once, later ones add up and ring 15 minutes after the last doorbell", async () => {
    const { id } = await subscribed();
    await h.services.offers.importCatalogue([octavia()]);
    await runDue();
    expect(matchesOf(id).map((doorbell) => doorbell.data.newMatches)).toEqual([1]);

    h.clock.advance(5 * MINUTE);
    await h.services.offers.importCatalogue([octavia()]);
    h.clock.advance(4 * MINUTE);
    await h.services.offers.importCatalogue([octavia(), octavia()]);
    await runDue();
    expect(matchesOf(id)).toHaveLength(1);

    h.clock.advance(6 * MINUTE); // 15 minutes after the first doorbell
    await runDue();
    const [, second] = matchesOf(id);
    expect(second?.data.newMatches).toBe(3);
    // latestDeliveredAt is the newest match's deliveredAt, the agent's next `since`.
    expect(second?.data.latestDeliveredAt).toBe(new Date(h.clock.now() - 6 * MINUTE).toISOString());
  });

  it("rule 5: 410 Gone ends the subscription at once", async () => {
    const { id, principal } = await subscribed();
    endpoint.control.status = 410;
    await h.services.offers.importCatalogue([octavia()]);
    await runDue();
    expect(await h.services.push?.view(principal, id)).toMatchObject({
      status: "ended",
      endedReason: "gone",
    });
  });

  it("rule 5: failing answers are retried with backoff and end the subscription with delivery-failed after 24 hours", async () => {
    const { id, principal, published } = await subscribed();
    endpoint.control.status = 503;
    const start = endpoint.requests.length;
    await h.services.offers.importCatalogue([octavia()]);
    await runDue();
    for (let hour = 0; hour < 25; hour += 1) {
      h.clock.advance(HOUR);
      await runDue();
    }
    const attempts = endpoint.requests.slice(start).length;
    expect(attempts).toBeGreaterThanOrEqual(8); // the Standard Webhooks schedule cut at 24 h, plus the ending
    expect(await h.services.push?.view(principal, id)).toMatchObject({
      status: "ended",
      endedReason: "delivery-failed",
    });
    const receipts = await h.services.push?.receipts(published.intent.id);
    expect(receipts?.[0]).toMatchObject({ status: "ended", listening: false });
  });

  it("rule 2: three failed challenges end the subscription with verification-failed", async () => {
    n += 1;
    const published = await activeIntent(h, agent, `rules-${n}@example.sk`);
    endpoint.control.status = 404;
    const { subscriptionId } = await ok<{ subscriptionId: string }>(agent, "intent_subscribe_events", {
      intentCode: published.intentCode,
      delivery: { url: `${endpoint.url}/${n}`, secret: endpoint.secret },
    });
    for (let attempt = 0; attempt < 3; attempt += 1) {
      await runDue();
      h.clock.advance(MINUTE);
    }
    const principal: Principal = { kind: "intent-code", intentId: published.intent.id };
    expect(await h.services.push?.view(principal, subscriptionId)).toMatchObject({
      status: "ended",
      endedReason: "verification-failed",
    });
    expect(endedOf(subscriptionId)).toEqual([]); // never verified: nothing is sent to it
  });

  it("rule 7: the lease ends it unless renewed, and the holder forgets it once the engine purged it", async () => {
    const { id, principal } = await subscribed();
    const view = await h.services.push?.view(principal, id);
    h.clock.set(Date.parse(view?.expiresAt ?? ""));
    await runDue();
    expect(endedOf(id).map((doorbell) => doorbell.data.reason)).toEqual(["lease-expired"]);
    expect(await h.services.push?.view(principal, id)).toMatchObject({
      status: "ended",
      endedReason: "lease-expired",
    });

    h.clock.advance(DAY + MINUTE);
    await runDue();
    await h.services.push?.sweep();
    await expect(h.services.push?.view(principal, id)).rejects.toThrow(
      /no subscription with that subscriptionId/,
    );
  });
});
