// Push profile §6 rule 3 on the person's own pages, over real HTTP: a subscription made while the
// intent awaits consent is a separate, unticked choice on the consent page (left empty, it ends
// with approval-withdrawn at confirmation); the manage page shows when the agent was last notified
// and whether it still listens (open question 5) and stops it in one action; rule 9 test calls
// need no person; §8.3 the live session hears notifications/resources/updated.

import { scopedSignalFetch } from "@doorbell/mcp-endpoint";
import { forEachEngine } from "@doorbell/store/testing";
import { generateSecret } from "@doorbell/webhooks";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  activeIntent,
  basicPublish,
  call,
  MINUTE,
  modernPost,
  octavia,
  ok,
  type Published,
  startHolder,
  type TestHolder,
  textOf,
} from "../support/mcp-harness.js";
import { FormClient, hiddenField } from "../support/pages-harness.js";
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
  let agent: Awaited<ReturnType<TestHolder["connect"]>>;
  let endpoint: AgentEndpoint;
  const runDue = () => (h.delivery as NonNullable<TestHolder["delivery"]>).runDue();

  beforeAll(async () => {
    h = await startHolder(engine, { push: true });
    endpoint = await startAgentEndpoint(h.clock.now);
    agent = await h.connect();
  });
  afterAll(async () => {
    await h.close();
    await endpoint.close();
  });

  describe("on the consent page", () => {
    let draft: Published;
    let chosen: PushAnswer;
    let left: PushAnswer;
    let manageUrl: string;
    const person = new FormClient("http://placeholder");
    const email = "chooser@example.sk";

    it("offers each subscription of a draft as a separate choice that is not pre-selected", async () => {
      draft = await ok<Published>(agent, "intent_publish_intent", basicPublish());
      chosen = await ok<PushAnswer>(agent, "intent_subscribe_events", {
        intentCode: draft.intentCode,
        delivery: { url: `${endpoint.url}/chosen`, secret: endpoint.secret },
      });
      left = await ok<PushAnswer>(agent, "intent_subscribe_events", {
        intentCode: draft.intentCode,
        delivery: { url: `${endpoint.url}/left`, secret: endpoint.secret },
        relayFor: "agent.example.org",
      });
      expect([chosen.approval, left.approval]).toEqual(["on-consent-page", "on-consent-page"]);
      await runDue();

      Object.assign(person, { origin: h.origin });
      const page = await person.get(new URL(draft.consentUrl).pathname);
      expect(page.status).toBe(200);
      for (const id of [chosen.subscriptionId, left.subscriptionId]) {
        const box = new RegExp(`<input[^>]*name="notify_${id}"[^>]*>`).exec(page.html)?.[0];
        expect(box).toBeDefined();
        expect(box).not.toMatch(/checked/);
      }
      // Who would be notified, and through whom (§7 rule 3), and what they learn.
      expect(page.html).toContain(
        "<strong>agent[.]example[.]org</strong>, relayed through <strong>127[.]0[.]0[.]1</strong>",
      );
      expect(page.html).toContain("never which offers");

      const consented = await person.post(new URL(draft.consentUrl).pathname, {
        csrf: hiddenField(page.html, "csrf") ?? "",
        consentVersion: hiddenField(page.html, "consentVersion") ?? "",
        email,
        consent: "yes",
        [`notify_${chosen.subscriptionId}`]: "yes",
      });
      expect(consented.status).toBe(200);
    });

    it("at confirmation allows the ticked one (it hears the status) and ends the other with approval-withdrawn", async () => {
      const [mail] = await h.ctx.mailbox.listMailbox({ to: email, limit: 1 });
      const confirmPath = /\/confirm\/[0-9A-Za-z]+/.exec(mail?.text ?? "")?.[0] ?? "";
      manageUrl = /\/manage\/[0-9A-Za-z]+/.exec(mail?.text ?? "")?.[0] ?? "";
      const confirmPage = await person.get(confirmPath);
      const confirmed = await person.post(confirmPath, { csrf: hiddenField(confirmPage.html, "csrf") ?? "" });
      expect(confirmed.status).toBe(200);
      await runDue();

      const principal = { kind: "intent-code" as const, intentId: draft.intent.id };
      const allowed = await h.services.push?.view(principal, chosen.subscriptionId);
      expect(allowed?.status).toBe("active");
      // Made on the draft (24 hours), its lease now runs with the intent (30 days).
      expect(Date.parse(allowed?.expiresAt ?? "")).toBeGreaterThan(
        Date.parse(chosen.expiresAt) + 24 * 60 * MINUTE,
      );
      expect(await h.services.push?.view(principal, left.subscriptionId)).toMatchObject({
        status: "ended",
        endedReason: "approval-withdrawn",
      });
      expect(endpoint.of("intent.status.changed").map((doorbell) => doorbell.data)).toContainEqual({
        subscriptionId: chosen.subscriptionId,
        status: "active",
      });
      // The one never allowed heard nothing but its challenge.
      expect(
        endpoint.doorbells.filter((doorbell) => doorbell.data.subscriptionId === left.subscriptionId),
      ).toEqual([]);
    });

    it("shows the receipts on the manage page and stops notifications in one action", async () => {
      await h.services.offers.importCatalogue([octavia()]);
      await runDue();
      const page = await person.get(manageUrl);
      expect(page.html).toContain("Assistants notified about this request");
      expect(page.html).toMatch(/Last notified <time/);
      expect(page.html).toContain("Still listening.");
      // The one left unticked is listed as stopped, in words.
      expect(page.html).toContain("stopped (you stopped it)");
      const stopPath = `${manageUrl}/notifications/${chosen.subscriptionId}/stop`;
      expect(page.html).toContain(`action="${stopPath}"`);

      const stopped = await person.post(stopPath, { csrf: hiddenField(page.html, "csrf") ?? "" });
      expect(stopped.status).toBe(303);
      await runDue();
      expect(endpoint.of("subscription.ended").map((doorbell) => doorbell.data)).toContainEqual({
        subscriptionId: chosen.subscriptionId,
        reason: "approval-withdrawn",
      });
      const after = await person.get(manageUrl);
      expect(after.html).not.toContain(`action="${stopPath}"`);
      expect(after.html).not.toContain("Still listening.");
    });

    it("refuses a stop without the form's token, a foreign subscription id, and a GET", async () => {
      const forged = await person.post(`${manageUrl}/notifications/${left.subscriptionId}/stop`, {
        csrf: "nope",
      });
      expect(forged.status).toBe(403);
      const bad = await person.post(`${manageUrl}/notifications/not-an-id/stop`, { csrf: "x" });
      expect(bad.status).toBe(404);
      const get = await person.get(`${manageUrl}/notifications/${left.subscriptionId}/stop`);
      expect(get.status).toBe(405);
    });
  });

  describe("elsewhere", () => {
    let published: Published;

    beforeAll(async () => {
      published = await activeIntent(h, agent, "elsewhere@example.sk");
    });

    it("never gives the agent the approval link (rule 3: the bearer of a code cannot switch it on)", async () => {
      const result = await call(agent, "intent_subscribe_events", {
        intentCode: published.intentCode,
        delivery: { url: `${endpoint.url}/never`, secret: generateSecret() },
      });
      expect(textOf(result)).not.toMatch(/\/notifications\/|\/manage\//);
      const [mail] = await h.ctx.mailbox.listMailbox({ to: "elsewhere@example.sk", limit: 1 });
      expect(mail?.subject).toBe("Allow an assistant to be notified about your intent?");
      expect(mail?.text).toContain("127.0.0.1");
    });

    it("verifies a test call (x-isto-test: 1), needs no person, sends the current status and ends soon (rule 9)", async () => {
      const tester = new Client({ name: "tester", version: "1" });
      await tester.connect(
        new StreamableHTTPClientTransport(h.mcpUrl, {
          fetch: scopedSignalFetch(),
          requestInit: { headers: { "x-isto-test": "1" } },
        }),
      );
      const test = await ok<PushAnswer>(tester, "intent_subscribe_events", {
        intentCode: published.intentCode,
        delivery: { url: `${endpoint.url}/test`, secret: endpoint.secret },
      });
      expect(test.approval).toBe("not-required");
      expect(Date.parse(test.expiresAt) - h.clock.now()).toBe(10 * MINUTE);
      await runDue();
      expect(endpoint.of("intent.status.changed").map((doorbell) => doorbell.data)).toContainEqual({
        subscriptionId: test.subscriptionId,
        status: "active",
      });
      h.clock.advance(10 * MINUTE);
      await runDue();
      expect(endpoint.of("subscription.ended").map((doorbell) => doorbell.data)).toContainEqual({
        subscriptionId: test.subscriptionId,
        reason: "lease-expired",
      });
      await tester.close();
    });

    it("lets a live 2025 session watch its subscription as a resource (§8.3), and no other session", async () => {
      const watcher = await h.connectLegacy("watcher");
      const live = await ok<PushAnswer>(watcher, "intent_subscribe_events", {
        intentCode: published.intentCode,
        delivery: { url: `${endpoint.url}/watched-2`, secret: generateSecret() },
      });
      const uri = `isto-intents://subscription/${live.subscriptionId}`;
      const listed = await watcher.listResources();
      expect(listed.resources.map((resource) => resource.uri)).toContain(uri);
      const updates: string[] = [];
      watcher.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
        updates.push(notification.params.uri);
      });
      await watcher.subscribeResource({ uri });
      const read = await watcher.readResource({ uri });
      expect(JSON.parse((read.contents[0] as { text: string }).text)).toMatchObject({
        type: "push-subscription",
        subscriptionId: live.subscriptionId,
      });

      await h.services.offers.importCatalogue([octavia()]);
      await expect.poll(() => updates, { timeout: 5_000 }).toContain(uri);

      // Another session knows the id but did not make the subscription: nothing to read or watch.
      const stranger = await h.connectLegacy("stranger");
      await expect(stranger.readResource({ uri })).rejects.toThrow(/no subscription resource/);
      await expect(stranger.subscribeResource({ uri })).rejects.toThrow(/no subscription resource/);
    });

    it("sends a 2026-07-28 client's subscriptions/listen stream the resource's updates (§8.3)", async () => {
      const agent = await h.connect("listener");
      const live = await ok<PushAnswer>(agent, "intent_subscribe_events", {
        intentCode: published.intentCode,
        delivery: { url: `${endpoint.url}/watched-3`, secret: generateSecret() },
      });
      const uri = `isto-intents://subscription/${live.subscriptionId}`;
      const controller = new AbortController();
      const response = await fetch(h.mcpUrl, {
        ...modernPost(
          "subscriptions/listen",
          { notifications: { resourceSubscriptions: [uri] } },
          { id: "listen-1" },
        ),
        signal: controller.signal,
      });
      expect(response.status).toBe(200);
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      let seen = "";
      const readUntil = async (pattern: RegExp) => {
        while (!pattern.test(seen)) {
          const { done, value } = await reader.read();
          if (done) break;
          seen += new TextDecoder().decode(value);
        }
      };
      await readUntil(/subscriptions\/acknowledged/);
      await h.services.offers.importCatalogue([octavia()]);
      await readUntil(/resources\/updated/);
      controller.abort();
      const updated = seen
        .split("\n")
        .filter((line) => line.startsWith("data: "))
        .map((line) => JSON.parse(line.slice(6)))
        .find((message) => message.method === "notifications/resources/updated");
      expect(updated.params.uri).toBe(uri);
      expect(updated.params._meta["io.modelcontextprotocol/subscriptionId"]).toBe("listen-1");
    });
  });
});
