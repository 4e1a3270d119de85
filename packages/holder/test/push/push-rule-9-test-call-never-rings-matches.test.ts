// Push profile §6 rules 3 and 9 against a test call (x-isto-test: 1), through real MCP clients over
// HTTP and a real agent endpoint on loopback: a test subscription is verified and may hear one
// intent.status.changed, but never an intent.matches.delivered (that needs the person, rule 3);
// further test calls never carry it past the 10 minutes from its creation; a real subscription to
// the same endpoint still waits for the person, and once allowed it alone hears the matches.

import type { DeliveryTables } from "@doorbell/delivery";
import { asTables } from "@doorbell/store";
import { forEachEngine } from "@doorbell/store/testing";
import type { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { matchesDoorbell } from "../../src/push/coalesced-doorbell.js";
import {
  activeIntent,
  basicPublish,
  confirmAsPerson,
  MINUTE,
  octavia,
  ok,
  type Published,
  startHolder,
  type TestHolder,
  type ToolCaller,
} from "../support/mcp-harness.js";
import { approvalToken, connectTester } from "../support/push-calls.js";
import { type AgentEndpoint, startAgentEndpoint } from "../support/push-endpoint.js";

interface PushAnswer {
  subscriptionId: string;
  status: string;
  approval?: string;
  expiresAt: string;
  endedReason?: string;
}

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let h: TestHolder;
  let endpoint: AgentEndpoint;
  let agent: Awaited<ReturnType<TestHolder["connect"]>>;
  let tester: LegacyClient;
  const runDue = () => (h.delivery as NonNullable<TestHolder["delivery"]>).runDue();
  const heard = (subscriptionId: string) =>
    endpoint.doorbells.filter((doorbell) => doorbell.data.subscriptionId === subscriptionId);
  const subscribe = (client: ToolCaller, intentCode: string, path: string) =>
    ok<PushAnswer>(client, "intent_subscribe_events", {
      intentCode,
      delivery: { url: `${endpoint.url}/${path}`, secret: endpoint.secret },
    });

  beforeAll(async () => {
    h = await startHolder(engine, { push: true });
    endpoint = await startAgentEndpoint(h.clock.now);
    agent = await h.connect();
    tester = await connectTester(h);
  });
  afterAll(async () => {
    await tester.close();
    await h.close();
    await endpoint.close();
  });

  it("a test subscription on an active intent hears its status once and no matches, from an import or a reply, while the allowed one does", async () => {
    const email = "tested@example.sk";
    const published = await activeIntent(h, agent, email, basicPublish({ visibility: "pseudonymous" }));
    const real = await subscribe(agent, published.intentCode, "allowed");
    await runDue();
    await h.services.push?.approveByToken(await approvalToken(h, email));
    const test = await subscribe(tester, published.intentCode, "test");
    expect(test.approval).toBe("not-required");
    await runDue();

    await h.services.offers.importCatalogue([octavia()]);
    const reply = await agent.callTool({
      name: "intent_submit_offer",
      arguments: {
        inReplyTo: published.intent.id,
        source: { kind: "reply", seller: "Autobazár Pezinok" },
        title: "Škoda Octavia Combi, reserved for you",
        category: "vehicles",
        price: { amount: 12_900, currency: "EUR" },
        location: { country: "SK", region: "SK-BL" },
        attributes: { make: "Škoda", model: "Octavia", fuel: "diesel", mileageKm: 90_000 },
      },
    });
    expect(reply.structuredContent).toEqual({ accepted: true });
    await runDue();

    expect(heard(test.subscriptionId).map((doorbell) => [doorbell.type, doorbell.data.status])).toEqual([
      ["intent.status.changed", "active"],
    ]);
    // Delivery works: the subscription the person allowed hears both matches in one doorbell.
    expect(
      heard(real.subscriptionId)
        .filter((doorbell) => doorbell.type === "intent.matches.delivered")
        .map((doorbell) => doorbell.data.newMatches),
    ).toEqual([2]);
  });

  it("test calls every few minutes never carry a test subscription past 10 minutes from the first", async () => {
    const published = await activeIntent(h, agent, "renewing.tester@example.sk");
    const first = await subscribe(tester, published.intentCode, "lease");
    const ends = Date.parse(first.expiresAt);
    expect(ends - h.clock.now()).toBe(10 * MINUTE);
    await runDue();
    for (const step of [3, 3, 3]) {
      h.clock.advance(step * MINUTE);
      const again = await subscribe(tester, published.intentCode, "lease");
      expect(again.subscriptionId).toBe(first.subscriptionId);
      expect(Date.parse(again.expiresAt)).toBe(ends);
      await runDue();
    }
    h.clock.advance(MINUTE);
    // At the tenth minute, before any worker has ended it: a test call makes a new test, it does
    // not revive the old one.
    const after = await subscribe(tester, published.intentCode, "lease");
    expect(after.subscriptionId).not.toBe(first.subscriptionId);
    expect(Date.parse(after.expiresAt) - h.clock.now()).toBe(10 * MINUTE);
    const principal = { kind: "intent-code" as const, intentId: published.intent.id };
    expect(await h.services.push?.view(principal, first.subscriptionId)).toMatchObject({
      status: "ended",
      endedReason: "lease-expired",
      expiresAt: first.expiresAt,
    });
  });

  it("a real subscription to a test subscription's endpoint still waits for the person; once allowed, only it hears the matches", async () => {
    const email = "same.endpoint@example.sk";
    const published = await activeIntent(h, agent, email);
    // Later than the activation, which delivered the earlier tests' offer before these subscriptions.
    h.clock.advance(MINUTE);
    const test = await subscribe(tester, published.intentCode, "same");
    await runDue();
    const real = await subscribe(agent, published.intentCode, "same");
    expect(real.subscriptionId).not.toBe(test.subscriptionId);
    expect(real.approval).toBe("sent-to-verified-channel");
    await runDue();
    const principal = { kind: "intent-code" as const, intentId: published.intent.id };
    expect((await h.services.push?.view(principal, real.subscriptionId))?.status).toBe(
      "awaiting_person_approval",
    );

    await h.services.offers.importCatalogue([octavia()]);
    await runDue();
    expect(
      endpoint.of("intent.matches.delivered").map((doorbell) => doorbell.data.subscriptionId),
    ).not.toContain(real.subscriptionId);

    // The person allows it: the match that arrived while it waited is rung now, to it alone.
    await h.services.push?.approveByToken(await approvalToken(h, email));
    await runDue();
    expect(
      heard(real.subscriptionId)
        .filter((doorbell) => doorbell.type === "intent.matches.delivered")
        .map((doorbell) => doorbell.data.newMatches),
    ).toEqual([1]);
    expect(heard(test.subscriptionId).map((doorbell) => doorbell.type)).toEqual(["intent.status.changed"]);
  });

  it("a test subscription made on a draft hears one status, not another when the intent is confirmed or withdrawn", async () => {
    const email = "draft.tester@example.sk";
    const draft = await ok<Published>(agent, "intent_publish_intent", basicPublish());
    const test = await subscribe(tester, draft.intentCode, "draft");
    expect(test.approval).toBe("not-required");
    await runDue();
    await confirmAsPerson(h, draft, email);
    await h.services.offers.importCatalogue([octavia()]);
    await runDue();
    await ok(agent, "intent_withdraw_intent", { intentCode: draft.intentCode });
    await runDue();
    expect(heard(test.subscriptionId).map((doorbell) => [doorbell.type, doorbell.data.status])).toEqual([
      ["intent.status.changed", "awaiting_consent"],
      ["subscription.ended", undefined],
    ]);
  });

  it("the delivery engine drops a matches doorbell queued for a test subscription by any other path", async () => {
    const published = await activeIntent(h, agent, "other.path@example.sk");
    const test = await subscribe(tester, published.intentCode, "other-path");
    await runDue();
    const delivery = h.delivery as NonNullable<TestHolder["delivery"]>;
    const db = asTables<DeliveryTables>(h.ctx.store.db);
    const principal = { kind: "intent-code" as const, intentId: published.intent.id };
    expect((await h.services.push?.view(principal, test.subscriptionId))?.status).toBe("active");
    const result = await delivery.enqueue(
      db,
      test.subscriptionId,
      matchesDoorbell({
        subscriberId: test.subscriptionId,
        count: 1,
        latest: new Date(h.clock.now()).toISOString(),
        timestamp: new Date(h.clock.now()).toISOString(),
      }),
    );
    expect(result).toBe("dropped");
    await runDue();
    expect(heard(test.subscriptionId).map((doorbell) => doorbell.type)).toEqual(["intent.status.changed"]);
  });
});
