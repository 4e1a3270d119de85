// Push profile §7 rule 6 (issue 16 item 16): "a forwarder ends its subscription towards the holder
// when the agent's ends" — at once, not on the holder's next doorbell. Through a real holder: the
// agent subscribes through the forwarder and the person approves; then the agent's endpoint answers
// a relayed doorbell with 410, so the delivery engine ends the agent's subscription without the
// agent. The holder's subscription must end right after with "unsubscribed" (the forwarder told it)
// — not stay active until a later doorbell draws a 410 ("gone") — and the relay forgets the code.
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
  const email = "rule6.person@example.sk";

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
    agent = new Client({ name: "rule6-agent", version: "1.0.0" });
    await agent.connect(new StreamableHTTPClientTransport(f.mcpUrl, { fetch: scopedSignalFetch() }));
  });
  afterAll(async () => {
    await agent?.close();
    await f?.close();
    await holder?.close();
    await endpoint?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const holderSubscription = () =>
    holderDb
      .selectFrom("delivery_subscriptions")
      .select(["status", "ended_reason", "verified"])
      .executeTakeFirst();

  it("when the agent's endpoint answers 410, the holder's subscription ends at once, told by the forwarder", async () => {
    // Publish through the forwarder; the person confirms at the holder.
    const published = await call(agent, "intent_publish_intent", {
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

    // Subscribe through the forwarder; the person approves at the holder.
    const subscribed = await call(agent, "intent_subscribe_events", {
      intentCode: forwarderCode,
      delivery: { url: endpoint.url, secret: endpoint.secret },
    });
    const subscriptionId = subscribed.subscriptionId as string;
    await until(async () => (await holderSubscription())?.verified === 1);
    const mails = await mailbox.listMailbox({ to: email, limit: 20 });
    const approval = mails.find((mail) => mail.subject.startsWith("Allow an assistant"));
    await (holder.services.push as PushService).approveByToken(
      /\/notifications\/([0-9A-Za-z]+)/.exec(approval?.text ?? "")?.[1] as string,
    );
    expect(await holderSubscription()).toMatchObject({ status: "active" });
    // Approval makes the intent's status news (push rule 3): that doorbell reaches the agent first.
    await until(() => endpoint.of("intent.status.changed").length > 0, 20_000);

    // The agent's endpoint is gone: the relayed doorbell gets 410 and the agent's subscription ends.
    endpoint.control.status = 410;
    await holder.services.offers.importCatalogue([
      {
        source: { kind: "catalogue", ref: "fwd-rule6-1", seller: "Autobazár Košice" },
        title: "Škoda Fabia 1.0 TSI",
        category: "vehicles",
        price: { amount: 9_900, currency: "EUR" },
        location: { country: "SK", region: "SK-KI" },
        url: "https://cars.example.sk/fabia",
        attributes: { make: "Škoda", model: "Fabia", year: 2020, mileageKm: 61_000, fuel: "petrol" },
        publishedAt: new Date().toISOString(),
      },
    ]);
    const ctx = f.forwarder.context;
    await until(
      async () => (await ctx.engine.get(deliveryDb(ctx.store.db), subscriptionId)).status === "ended",
      20_000,
    );
    expect((await ctx.engine.get(deliveryDb(ctx.store.db), subscriptionId)).endedReason).toBe("gone");

    // The holder's side ends without another doorbell: the forwarder unsubscribed it.
    await until(async () => (await holderSubscription())?.status === "ended", 10_000);
    expect(await holderSubscription()).toMatchObject({ status: "ended", ended_reason: "unsubscribed" });
    const relay = await ctx.store.db
      .selectFrom("forwarder_relays")
      .select(["status", "ended_reason", "holder_code_sealed"])
      .where("agent_subscription_id", "=", subscriptionId)
      .executeTakeFirstOrThrow();
    expect(relay).toEqual({ status: "ended", ended_reason: "gone", holder_code_sealed: null });
  });
});
