// Push profile §7 rule 6 (issue 16 item 16) within rule 1 ("nothing in the relay record can open
// the holder's code"), through a real holder that does not take end requests (one built before
// them: holder-behind-forwarder.ts `startOlderHolder`). With the agent present — it unsubscribes,
// or subscribes again — the forwarder opens the holder's code with the agent's and ends the
// holder's subscription at once ("unsubscribed"). Without the agent — its endpoint answers 410 —
// the forwarder cannot call such a holder, so it marks the relay ended at once; the holder's next
// doorbell to the relay gets 410 and the holder ends its side ("gone"). At no point does the relay
// record hold anything the forwarder's keyring alone opens to the holder's code. A holder that
// takes end requests ends its side at once: forwarder-rule-6-end-request.test.ts.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { forEachEngine } from "@doorbell/store/testing";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deliveryDb } from "../src/context.js";
import { openRecord } from "../src/records.js";
import {
  type AgentEndpoint,
  openedByKeyring,
  startAgentEndpoint,
  startForwarder,
  until,
} from "./forwarder-harness.js";
import {
  call,
  connectAgent,
  holderSide,
  offerArrives,
  startOlderHolder,
  subscribedAndApproved as subscribedAndApprovedAt,
} from "./holder-behind-forwarder.js";

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let older: Awaited<ReturnType<typeof startOlderHolder>>;
  let dataDir: string;
  let f: Awaited<ReturnType<typeof startForwarder>>;
  let endpoint: AgentEndpoint;
  let agent: Client;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-forwarder-rule6-"));
    older = await startOlderHolder({ dataDir });
    f = await startForwarder(engine, `${older.origin}/mcp`);
    endpoint = await startAgentEndpoint();
    agent = await connectAgent(f.mcpUrl);
  });
  afterAll(async () => {
    await agent?.close();
    await f?.close();
    await older?.close();
    await endpoint?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const holderSubscription = (id: string) => holderSide(older.holder).subscription(id);

  const relayOf = (fwd: typeof f, id: string) =>
    fwd.forwarder.context.store.db
      .selectFrom("forwarder_relays")
      .select(["status", "ended_reason", "holder_subscription_id"])
      .where("agent_subscription_id", "=", id)
      .executeTakeFirstOrThrow();

  const agentSide = async (fwd: typeof f, id: string) => {
    const ctx = fwd.forwarder.context;
    return ctx.engine.get(deliveryDb(ctx.store.db), id);
  };

  const subscribedAndApproved = (client: Client, fwd: typeof f, email: string) =>
    subscribedAndApprovedAt(
      { holder: older.holder, agent: client, endpoint, relayOf: (id) => relayOf(fwd, id) },
      email,
    );

  /** What the forwarder's keyring alone opens in the relay table: never the holder's code. */
  async function keyringOpensNoHolderCode(fwd: typeof f, forwarderCode: string) {
    const holderCode = (await openRecord(fwd.forwarder.context, forwarderCode))?.holderCode as string;
    expect(holderCode).toMatch(/^ic_/);
    const opened = await openedByKeyring(fwd.forwarder);
    expect(opened.length).toBeGreaterThan(0);
    expect(opened).not.toContain(holderCode);
    const rows = await fwd.forwarder.context.store.db.selectFrom("forwarder_relays").selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(holderCode.slice(3));
  }

  it("when the agent unsubscribes, the holder's subscription ends at once", async () => {
    const { forwarderCode, subscriptionId, holderId } = await subscribedAndApproved(
      agent,
      f,
      "rule6.one@example.sk",
    );
    await keyringOpensNoHolderCode(f, forwarderCode);
    // The leases coincide, so a lease's end ends both sides with no call needed.
    const holderLease = await holderSide(older.holder)
      .db.selectFrom("delivery_subscriptions")
      .select(["expires_at"])
      .where("id", "=", holderId)
      .executeTakeFirstOrThrow();
    expect((await agentSide(f, subscriptionId)).expiresAt).toBe(Number(holderLease.expires_at));
    const ended = await call(agent, "intent_unsubscribe_events", {
      intentCode: forwarderCode,
      subscriptionId,
    });
    expect(ended).toMatchObject({ subscriptionId, status: "ended" });
    // No doorbell needed: the holder was told within the call.
    expect(await holderSubscription(holderId)).toMatchObject({
      status: "ended",
      ended_reason: "unsubscribed",
    });
    expect(await relayOf(f, subscriptionId)).toMatchObject({ status: "ended", ended_reason: "unsubscribed" });
    expect((await agentSide(f, subscriptionId)).status).toBe("ended");
  });

  it("when the agent's endpoint answers 410 and the holder takes no end request, the relay ends at once and the holder's next doorbell gets 410", async () => {
    const statusBefore = endpoint.of("intent.status.changed").length;
    const { forwarderCode, subscriptionId, holderId } = await subscribedAndApproved(
      agent,
      f,
      "rule6.two@example.sk",
    );
    // Approval makes the intent's status news (push rule 3): that doorbell reaches the agent first.
    await until(() => endpoint.of("intent.status.changed").length > statusBefore, 20_000);

    // The agent's endpoint is gone: the relayed doorbell gets 410 and the agent's subscription ends.
    endpoint.control.status = 410;
    try {
      await offerArrives(older.holder);
      await until(async () => (await agentSide(f, subscriptionId)).status === "ended", 20_000);
      expect((await agentSide(f, subscriptionId)).endedReason).toBe("gone");

      // The relay is marked ended without another doorbell (the sweep); the holder's side still
      // runs: only the agent's code could tell this holder now, which takes no end request.
      await until(async () => (await relayOf(f, subscriptionId)).status === "ended", 10_000);
      expect(await relayOf(f, subscriptionId)).toMatchObject({ status: "ended", ended_reason: "gone" });
      // The forwarder looked once: this holder's descriptor names no end URL, so it stops trying.
      const endRequest = () =>
        f.forwarder.context.store.db
          .selectFrom("forwarder_relays")
          .select(["holder_end_due_at", "holder_end_attempts", "holder_subscription_id"])
          .where("agent_subscription_id", "=", subscriptionId)
          .executeTakeFirstOrThrow();
      await until(async () => (await endRequest()).holder_end_due_at === null);
      expect(await endRequest()).toEqual({
        holder_end_due_at: null,
        holder_end_attempts: 1,
        holder_subscription_id: holderId,
      });
      expect(await holderSubscription(holderId)).toMatchObject({ status: "active" });
      await keyringOpensNoHolderCode(f, forwarderCode);

      // The holder's next doorbell to the relay draws 410, and the holder ends its subscription.
      // (A status doorbell, queued by the holder's own engine: match doorbells coalesce for 15 min.)
      await older.holder.delivery.enqueue(holderSide(older.holder).deliveryDb, holderId, {
        type: "intent.status.changed",
        data: { subscriptionId: holderId, status: "active" },
      });
      await until(async () => (await holderSubscription(holderId)).status === "ended", 20_000);
      expect(await holderSubscription(holderId)).toMatchObject({ status: "ended", ended_reason: "gone" });
    } finally {
      endpoint.control.status = 0;
    }
  });

  it("subscribing again after the agent's side ended without it ends the old holder subscription first", async () => {
    const first = await subscribedAndApproved(agent, f, "rule6.three@example.sk");
    // The agent's endpoint refuses the approval's status doorbell: its side ends, the holder's lives.
    endpoint.control.status = 410;
    try {
      await until(async () => (await agentSide(f, first.subscriptionId)).status === "ended", 20_000);
      await until(async () => (await relayOf(f, first.subscriptionId)).status === "ended", 10_000);
      expect(await holderSubscription(first.holderId)).toMatchObject({ status: "active" });
    } finally {
      endpoint.control.status = 0;
    }

    // The agent is back with its code: the forwarder opens the holder's and ends the old one.
    const again = await call(agent, "intent_subscribe_events", {
      intentCode: first.forwarderCode,
      delivery: { url: endpoint.url, secret: endpoint.secret },
    });
    expect(again.subscriptionId).not.toBe(first.subscriptionId);
    expect(await holderSubscription(first.holderId)).toMatchObject({
      status: "ended",
      ended_reason: "unsubscribed",
    });
    const renewed = await relayOf(f, again.subscriptionId as string);
    expect(renewed.holder_subscription_id).not.toBe(first.holderId);
    // Told once: the ended relay no longer names a holder subscription to end.
    expect(await relayOf(f, first.subscriptionId)).toMatchObject({
      status: "ended",
      holder_subscription_id: null,
    });
  });
});
