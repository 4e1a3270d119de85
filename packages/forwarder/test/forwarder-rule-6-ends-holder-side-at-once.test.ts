// Push profile §7 rule 6 (issue 16 item 16) within rule 1 ("nothing in the relay record can open
// the holder's code"), through a real holder. With the agent present — it unsubscribes, or
// subscribes again — the forwarder opens the holder's code with the agent's and ends the holder's
// subscription at once ("unsubscribed"). Without the agent — its endpoint answers 410 — the
// forwarder cannot call the holder, so it marks the relay ended at once; the holder's next doorbell
// to the relay gets 410 and the holder ends its side ("gone"). At no point does the relay record
// hold anything the forwarder's keyring alone opens to the holder's code.
import { once } from "node:events";
import fs from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import type { DeliveryTables } from "@doorbell/delivery";
import {
  createHolder,
  type Holder,
  type LocalMailbox,
  type PushService,
  type PushTables,
  scopedSignalFetch,
} from "@doorbell/holder";
import type { Kysely } from "@doorbell/store";
import { forEachEngine } from "@doorbell/store/testing";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { pino } from "pino";
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

async function freePort(): Promise<number> {
  const probe = createServer();
  probe.listen(0, "127.0.0.1");
  await once(probe, "listening");
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

async function call(client: Client, name: string, args: Record<string, unknown>) {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  expect(result.isError, JSON.stringify(result.content)).not.toBe(true);
  return result.structuredContent as Record<string, unknown>;
}

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let holder: Holder;
  let dataDir: string;
  let f: Awaited<ReturnType<typeof startForwarder>>;
  let endpoint: AgentEndpoint;
  let agent: Client;
  let holderDb: Kysely<PushTables & DeliveryTables>;
  let offers = 0;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-forwarder-rule6-"));
    const port = await freePort();
    holder = await createHolder({
      dataDir,
      publicUrl: `http://127.0.0.1:${port}`,
      mcp: { toolRateLimit: false, sessionRateLimit: false },
      log: pino({ level: "silent" }),
    });
    await holder.listen(port, "127.0.0.1");
    holderDb = holder.context.store.db as unknown as Kysely<PushTables & DeliveryTables>;
    f = await startForwarder(engine, holder.summary.mcpUrl);
    endpoint = await startAgentEndpoint();
    agent = await connect(f.mcpUrl);
  });
  afterAll(async () => {
    await agent?.close();
    await f?.close();
    await holder?.close();
    await endpoint?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  async function connect(url: URL): Promise<Client> {
    const client = new Client({ name: "rule6-agent", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(url, { fetch: scopedSignalFetch() }));
    return client;
  }

  const holderSubscription = (id: string) =>
    holderDb
      .selectFrom("delivery_subscriptions")
      .select(["status", "ended_reason", "verified"])
      .where("id", "=", id)
      .executeTakeFirstOrThrow();

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

  /** Publish through the forwarder, confirm at the holder, subscribe, approve: both sides active. */
  async function subscribedAndApproved(client: Client, fwd: typeof f, email: string) {
    const published = await call(client, "intent_publish_intent", {
      statement: "A Škoda Fabia, petrol, near Košice",
      criteria: { category: "vehicles", make: "Škoda", model: "Fabia", fuel: "petrol" },
      area: { country: "SK", region: "SK-KI" },
      budget: { amount: 12_000, currency: "EUR" },
    });
    const forwarderCode = published.intentCode as string;
    const consentUrl = published.consentUrl as string;
    const mailbox = holder.context.mailer as LocalMailbox;
    await holder.services.consent.giveConsent(consentUrl.slice(consentUrl.lastIndexOf("/") + 1), {
      email,
      accepted: true,
    });
    const [confirmation] = await mailbox.listMailbox({ to: email, limit: 1 });
    await holder.services.consent.confirmEmail(
      /\/confirm\/([0-9A-Za-z]+)/.exec(confirmation?.text ?? "")?.[1] as string,
    );
    const subscribed = await call(client, "intent_subscribe_events", {
      intentCode: forwarderCode,
      delivery: { url: endpoint.url, secret: endpoint.secret },
    });
    const subscriptionId = subscribed.subscriptionId as string;
    const holderId = (await relayOf(fwd, subscriptionId)).holder_subscription_id as string;
    await until(async () => (await holderSubscription(holderId)).verified === 1);
    const mails = await mailbox.listMailbox({ to: email, limit: 20 });
    const approval = mails.find((mail) => mail.subject.startsWith("Allow an assistant"));
    await (holder.services.push as PushService).approveByToken(
      /\/notifications\/([0-9A-Za-z]+)/.exec(approval?.text ?? "")?.[1] as string,
    );
    expect(await holderSubscription(holderId)).toMatchObject({ status: "active" });
    return { forwarderCode, subscriptionId, holderId };
  }

  /** A matching offer at the holder: one doorbell towards every subscription of the Fabia intents. */
  async function offerArrives() {
    offers++;
    await holder.services.offers.importCatalogue([
      {
        source: { kind: "catalogue", ref: `fwd-rule6-${offers}`, seller: "Autobazár Košice" },
        title: "Škoda Fabia 1.0 TSI",
        category: "vehicles",
        price: { amount: 9_900, currency: "EUR" },
        location: { country: "SK", region: "SK-KI" },
        url: `https://cars.example.sk/fabia-${offers}`,
        attributes: { make: "Škoda", model: "Fabia", year: 2020, mileageKm: 61_000, fuel: "petrol" },
        publishedAt: new Date().toISOString(),
      },
    ]);
  }

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
    const holderLease = await holderDb
      .selectFrom("delivery_subscriptions")
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

  it("when the agent's endpoint answers 410, the relay ends at once and the holder's next doorbell gets 410", async () => {
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
      await offerArrives();
      await until(async () => (await agentSide(f, subscriptionId)).status === "ended", 20_000);
      expect((await agentSide(f, subscriptionId)).endedReason).toBe("gone");

      // The relay is marked ended without another doorbell (the sweep); the holder's side still
      // runs, since only the agent's code could tell it now.
      await until(async () => (await relayOf(f, subscriptionId)).status === "ended", 10_000);
      expect(await relayOf(f, subscriptionId)).toMatchObject({ status: "ended", ended_reason: "gone" });
      expect(await holderSubscription(holderId)).toMatchObject({ status: "active" });
      await keyringOpensNoHolderCode(f, forwarderCode);

      // The holder's next doorbell to the relay draws 410, and the holder ends its subscription.
      // (A status doorbell, queued by the holder's own engine: match doorbells coalesce for 15 min.)
      await holder.delivery.enqueue(holderDb as unknown as Kysely<DeliveryTables>, holderId, {
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
