// The push tools end to end against a real holder (its delivery engine and development egress
// policy, which lets a loopback http endpoint be called): subscribe, the person allows it from the
// mailed link (rule 3), the holder's challenge answered by the listener, its doorbells verified,
// renewal with a new secret keeping the subscriptionId, and unsubscribe. A test call (rule 9)
// would never hear of matches nor renew, so these are real subscriptions.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createMemoryStateStore,
  DoorbellAgent,
  type IntentHandle,
  type StateStore,
  type SubscriptionReport,
} from "../src/index.js";
import { type RunningHolder, startHolder } from "./holder-fixture.js";

let h: RunningHolder;
let server: http.Server | undefined;
beforeEach(async () => {
  h = await startHolder();
});
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
  await h?.close();
});

async function until(check: () => boolean, what: string, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** The listener's port must be known before the url is given to the holder: serve first, then open the agent. */
async function agentWithEndpoint(store: StateStore, reports: SubscriptionReport[], statuses: string[]) {
  let agent: DoorbellAgent | undefined;
  server = http.createServer((req, res) => {
    if (agent === undefined) res.writeHead(503).end();
    else agent.listener.node(req, res);
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  agent = await DoorbellAgent.open({
    holder: { url: h.mcpUrl },
    clock: h.clock.now,
    store,
    endpointUrl: `http://127.0.0.1:${port}/doorbell`,
    onSubscription: (_intent, report) => {
      reports.push(report);
    },
    onStatus: (_intent, status) => {
      statuses.push(status);
    },
  });
  return agent;
}

describe("push tools with a real holder", () => {
  it("subscribes, proves the endpoint, hears a doorbell, renews with a new secret and unsubscribes", async () => {
    const email = "push-agent-1@example.sk";
    const { intentCode } = await h.activeIntent(email);
    const store = createMemoryStateStore();
    const reports: SubscriptionReport[] = [];
    const statuses: string[] = [];
    const agent = await agentWithEndpoint(store, reports, statuses);
    expect(agent.holder.supportsPush).toBe(true);
    const intent: IntentHandle = await agent.watch(intentCode);
    const first = reports.find((report) => report.subscriptionId !== undefined);
    expect(first).toMatchObject({ approval: "sent-to-verified-channel" });
    expect(first?.subscriptionId).toMatch(/^sub_/);
    await h.allowDoorbells(email);

    // Rule 9: after the challenge the holder sends the current status once: the first doorbell.
    await until(() => agent.report(intent.handle)?.mode === "doorbell", "the first doorbell");
    expect(agent.report(intent.handle)).toMatchObject({
      status: "active",
      subscriptionId: first?.subscriptionId,
    });

    // Renewal at refreshBefore: the same call with a new secret; the id stays, the old secret is kept for a while.
    const saved = async () => (await store.load()).watches[intent.handle]?.subscription;
    const before = await saved();
    const refreshBefore = Date.parse(before?.refreshBefore as string);
    expect(refreshBefore).toBeGreaterThan(h.clock.now());
    h.clock.advance(refreshBefore - h.clock.now());
    await agent.runDue();
    const after = await saved();
    expect(after?.subscriptionId).toBe(before?.subscriptionId);
    expect(after?.secrets).toHaveLength(2);
    expect(after?.secrets[1]?.secret).toBe(before?.secrets[0]?.secret);
    expect(after?.secrets[0]?.secret).not.toBe(before?.secrets[0]?.secret);
    expect(Date.parse(after?.refreshBefore as string)).toBeGreaterThan(refreshBefore);

    await agent.unwatch(intent.handle);
    expect(agent.watches()).toEqual([]);
    await agent.close();
  });

  it("reads the new matches a real doorbell announces, without waiting 15 minutes", async () => {
    const email = "push-agent-2@example.sk";
    const { intentCode } = await h.activeIntent(email);
    const store = createMemoryStateStore();
    const agent = await agentWithEndpoint(store, [], []);
    const intent = await agent.watch(intentCode);
    await h.allowDoorbells(email);
    await until(() => agent.report(intent.handle)?.mode === "doorbell", "the first doorbell");
    // Not started: the agent reads when the test runs its due work after the doorbell's grant.
    h.clock.advance(60_000);
    await h.addOffers(2);
    // Nothing is read before the due work runs, whenever the doorbell lands.
    const seen = await store.load();
    expect(seen.watches[intent.handle]?.cursor?.offerIds ?? []).toHaveLength(0);
    await until(() => agent.holder.pacing(intentCode)?.granted === true, "the matches doorbell");
    await agent.runDue();
    const after = await store.load();
    expect(after.watches[intent.handle]?.cursor?.offerIds).toHaveLength(2);
    await agent.close();
  });
});
