/**
 * Push rule 3 and §4.1 as issue 16 found them:
 * - item 10: a subscription ticked on the consent page survives until the person confirms, even
 *   when the confirmation comes after the draft's 24 hours (the link lasts 48);
 * - item 11: the approval holds for one delivery.url until the intent ends or the person takes it
 *   back, so subscribing the same url again after lease-expired needs no new approval.
 */
import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Principal } from "../../src/model/types.js";
import { HOUR } from "../../src/testing.js";
import { startAgentEndpoint } from "../support/push-endpoint.js";
import {
  activeIntent,
  mailsTo,
  octaviaWanted,
  publishDraft,
  type ServicesHolder,
  startServices,
} from "../support/services-harness.js";

const pushOf = (h: ServicesHolder) => h.services.push as NonNullable<ServicesHolder["services"]["push"]>;

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  it("item 10: a ticked choice confirmed 30 hours after consent is allowed, not lease-expired", async () => {
    const h = await startServices(engine, { push: true });
    const endpoint = await startAgentEndpoint(h.clock.now);
    try {
      const draft = await publishDraft(h);
      const principal: Principal = { kind: "intent-code", intentId: draft.intentId };
      const { subscriptionId } = await pushOf(h).subscribe(principal, {
        delivery: { url: `${endpoint.url}/late`, secret: endpoint.secret },
      });
      await h.runDue();
      const email = "late@example.sk";
      await h.services.consent.giveConsent(draft.consentUrl.slice(draft.consentUrl.lastIndexOf("/") + 1), {
        email,
        accepted: true,
      });
      await pushOf(h).chooseOnConsent(draft.intentId, [subscriptionId]);
      h.clock.advance(30 * HOUR);
      await h.runDue();
      expect((await pushOf(h).view(principal, subscriptionId)).status).not.toBe("ended");
      const [mail] = await mailsTo(h, email);
      const confirmToken = /\/confirm\/([0-9A-Za-z]+)/.exec(mail?.text ?? "")?.[1] as string;
      await h.services.consent.confirmEmail(confirmToken);
      await h.runDue();
      const view = await pushOf(h).view(principal, subscriptionId);
      expect(view).toMatchObject({ status: "active", approval: "granted" });
      expect(endpoint.of("intent.status.changed").map((d) => d.data.status)).toContain("active");
    } finally {
      await endpoint.close();
    }
  });

  it("item 11: the same url after lease-expired is subscribed again without a new approval", async () => {
    const h = await startServices(engine, { push: true });
    const endpoint = await startAgentEndpoint(h.clock.now);
    try {
      const email = "again@example.sk";
      // Valid for 90 days: the 30-day lease runs out while the intent is still active.
      const validUntil = new Date(h.clock.now() + 90 * 24 * HOUR).toISOString();
      const buyer = await activeIntent(h, email, octaviaWanted({ validUntil }));
      const principal: Principal = { kind: "intent-code", intentId: buyer.intentId };
      const url = `${endpoint.url}/again`;
      const first = await pushOf(h).subscribe(principal, { delivery: { url, secret: endpoint.secret } });
      await h.runDue();
      await pushOf(h).approve(buyer.intentId, first.subscriptionId);
      await h.runDue();
      h.clock.set(Date.parse(first.expiresAt) + 1);
      await h.runDue();
      expect(await pushOf(h).view(principal, first.subscriptionId)).toMatchObject({
        status: "ended",
        endedReason: "lease-expired",
      });
      const mailsBefore = (await mailsTo(h, email)).length;

      const second = await pushOf(h).subscribe(principal, { delivery: { url, secret: endpoint.secret } });
      expect(second.approval).toBe("granted");
      await h.runDue();
      expect(await pushOf(h).view(principal, second.subscriptionId)).toMatchObject({ status: "active" });
      expect((await mailsTo(h, email)).length).toBe(mailsBefore); // no approval link mailed
      const statuses = endpoint
        .of("intent.status.changed")
        .filter((d) => d.data.subscriptionId === second.subscriptionId);
      expect(statuses.map((d) => d.data.status)).toEqual(["active"]);

      // Taken back by the person: the next subscription to that url needs approval again.
      await pushOf(h).revoke(buyer.intentId, second.subscriptionId);
      const third = await pushOf(h).subscribe(principal, { delivery: { url, secret: endpoint.secret } });
      expect(third.approval).toBe("sent-to-verified-channel");
    } finally {
      await endpoint.close();
    }
  });
});
