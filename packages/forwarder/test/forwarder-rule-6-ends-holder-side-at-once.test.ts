// Push profile §7 rule 6 (issue 16 item 16): "a forwarder ends its subscription towards the holder
// when the agent's ends" — at once, not on the holder's next doorbell. Through a real holder: the
// agent subscribes through the forwarder and the person approves; then the agent's endpoint answers
// a relayed doorbell with 410, so the delivery engine ends the agent's subscription without the
// agent. The holder's subscription must end right after with "unsubscribed" (the forwarder told it)
// — not stay active until a later doorbell draws a 410 ("gone") — and the relay forgets the code.
// And when the agent subscribes again before the forwarder noticed, the old holder subscription
// ends before the new one begins.
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
import { type AgentEndpoint, startAgentEndpoint, startForwarder, until } from "./forwarder-harness.js";

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
      .select(["status", "ended_reason", "holder_code_sealed", "holder_subscription_id"])
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

  it("when the agent's endpoint answers 410, the holder's subscription ends at once, told by the forwarder", async () => {
    const { subscriptionId, holderId } = await subscribedAndApproved(agent, f, "rule6.one@example.sk");
    // Approval makes the intent's status news (push rule 3): that doorbell reaches the agent first.
    await until(() => endpoint.of("intent.status.changed").length > 0, 20_000);

    // The agent's endpoint is gone: the relayed doorbell gets 410 and the agent's subscription ends.
    endpoint.control.status = 410;
    await offerArrives();
    await until(async () => (await agentSide(f, subscriptionId)).status === "ended", 20_000);
    expect((await agentSide(f, subscriptionId)).endedReason).toBe("gone");

    // The holder's side ends without another doorbell: the forwarder unsubscribed it.
    await until(async () => (await holderSubscription(holderId)).status === "ended", 10_000);
    expect(await holderSubscription(holderId)).toMatchObject({
      status: "ended",
      ended_reason: "unsubscribed",
    });
    expect(await relayOf(f, subscriptionId)).toMatchObject({
      status: "ended",
      ended_reason: "gone",
      holder_code_sealed: null,
    });
    endpoint.control.status = 0;
  });

  it("subscribing again before the forwarder noticed ends the old holder subscription first", async () => {
    // A forwarder whose sweep does not run within the test: only the subscribe call can notice.
    // (The first forwarder shares the database; its sweep would notice, so it stops.)
    await agent.close();
    await f.close();
    const slow = await startForwarder(engine, holder.summary.mcpUrl, { endingSweepMs: 3_600_000 });
    const client = await connect(slow.mcpUrl);
    try {
      const first = await subscribedAndApproved(client, slow, "rule6.two@example.sk");
      // The agent's endpoint refuses the approval's status doorbell: its side ends, the holder's lives.
      endpoint.control.status = 410;
      await until(async () => (await agentSide(slow, first.subscriptionId)).status === "ended", 20_000);
      expect(await holderSubscription(first.holderId)).toMatchObject({ status: "active" });

      endpoint.control.status = 0;
      const again = await call(client, "intent_subscribe_events", {
        intentCode: first.forwarderCode,
        delivery: { url: endpoint.url, secret: endpoint.secret },
      });
      expect(again.subscriptionId).not.toBe(first.subscriptionId);
      expect(await holderSubscription(first.holderId)).toMatchObject({
        status: "ended",
        ended_reason: "unsubscribed",
      });
      const renewed = await relayOf(slow, again.subscriptionId as string);
      expect(renewed.holder_subscription_id).not.toBe(first.holderId);
      expect(await relayOf(slow, first.subscriptionId)).toMatchObject({
        status: "ended",
        holder_code_sealed: null,
      });
    } finally {
      await client.close();
      await slow.close();
    }
  });
});
