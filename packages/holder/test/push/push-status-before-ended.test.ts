/**
 * Issue 16 item 15 (push rule 3: the agent learns that the status changed): when an intent is
 * withdrawn or expires, each subscription that asked for status doorbells hears
 * intent.status.changed with the new status, then subscription.ended — in that order.
 */
import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Principal } from "../../src/model/types.js";
import { startAgentEndpoint } from "../support/push-endpoint.js";
import { activeIntent, type ServicesHolder, startServices } from "../support/services-harness.js";

async function subscribed(h: ServicesHolder, url: string, secret: string, email: string) {
  const buyer = await activeIntent(h, email);
  const push = h.services.push as NonNullable<ServicesHolder["services"]["push"]>;
  const principal: Principal = { kind: "intent-code", intentId: buyer.intentId };
  const { subscriptionId } = await push.subscribe(principal, { delivery: { url, secret } });
  await h.runDue();
  await push.approve(buyer.intentId, subscriptionId);
  await h.runDue();
  return { buyer, principal, subscriptionId };
}

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  it("withdrawn: intent.status.changed (withdrawn) comes before subscription.ended", async () => {
    const h = await startServices(engine, { push: true });
    const endpoint = await startAgentEndpoint(h.clock.now);
    try {
      const { principal, subscriptionId } = await subscribed(
        h,
        `${endpoint.url}/w`,
        endpoint.secret,
        "w@example.sk",
      );
      const before = endpoint.doorbells.length;
      await h.services.intents.withdraw(principal);
      await h.runDue();
      const after = endpoint.doorbells.slice(before).filter((d) => d.data.subscriptionId === subscriptionId);
      expect(after.map((d) => [d.type, d.data.status ?? d.data.reason])).toEqual([
        ["intent.status.changed", "withdrawn"],
        ["subscription.ended", "intent-withdrawn"],
      ]);
    } finally {
      await endpoint.close();
    }
  });

  it("expired: intent.status.changed (expired) comes before subscription.ended", async () => {
    const h = await startServices(engine, { push: true });
    const endpoint = await startAgentEndpoint(h.clock.now);
    try {
      const { subscriptionId } = await subscribed(h, `${endpoint.url}/e`, endpoint.secret, "e@example.sk");
      const before = endpoint.doorbells.length;
      h.clock.advance(31 * 24 * 60 * 60_000);
      await h.services.intents.expireDue();
      await h.runDue();
      const after = endpoint.doorbells.slice(before).filter((d) => d.data.subscriptionId === subscriptionId);
      expect(after.map((d) => [d.type, d.data.status ?? d.data.reason])).toEqual([
        ["intent.status.changed", "expired"],
        ["subscription.ended", "intent-expired"],
      ]);
    } finally {
      await endpoint.close();
    }
  });

  it("expired: the delivery worker at the intent's end does not beat the expiry sweep (lease-expired)", async () => {
    const h = await startServices(engine, { push: true });
    const endpoint = await startAgentEndpoint(h.clock.now);
    try {
      const buyer = await activeIntent(h, "x@example.sk");
      const push = h.services.push as NonNullable<ServicesHolder["services"]["push"]>;
      const principal: Principal = { kind: "intent-code", intentId: buyer.intentId };
      // Subscribed a day after publishing, so the intent's end (not 30 days) caps the lease.
      h.clock.advance(24 * 60 * 60_000);
      const { subscriptionId } = await push.subscribe(principal, {
        delivery: { url: `${endpoint.url}/x`, secret: endpoint.secret },
      });
      await h.runDue();
      await push.approve(buyer.intentId, subscriptionId);
      await h.runDue();
      const intent = await h.services.intents.get(principal);
      const before = endpoint.doorbells.length;
      // Just past validUntil, before the next expiry sweep: the worker runs first.
      h.clock.advance(Date.parse(intent.validUntil) - h.clock.now() + 30_000);
      await h.runDue();
      await h.services.intents.expireDue();
      await h.runDue();
      const after = endpoint.doorbells.slice(before).filter((d) => d.data.subscriptionId === subscriptionId);
      expect(after.map((d) => [d.type, d.data.status ?? d.data.reason])).toEqual([
        ["intent.status.changed", "expired"],
        ["subscription.ended", "intent-expired"],
      ]);
    } finally {
      await endpoint.close();
    }
  });
});
