// Push profile §7 end to end on loopback: a real holder (createHolder), a forwarder in front of it
// and an agent's endpoint. The agent publishes through the forwarder (and gets a forwarder code,
// never the holder's), the person confirms at the holder, the agent subscribes through the
// forwarder (rule 1: its endpoint is challenged first; rule 3: the holder is told whom the
// forwarder relays for), the person approves at the holder, an offer arrives, and the agent's
// endpoint gets the re-signed doorbell with the forwarder's subscriptionId (rule 4); it reads the
// match through the forwarder (rule 5) and unsubscribing ends both sides (rule 6).
import fs from "node:fs";
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
import { forEachEngine, freePort } from "@doorbell/store/testing";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentEndpoint, startAgentEndpoint, startForwarder, until } from "./forwarder-harness.js";

const statement = "A Škoda Octavia combi, diesel, near Bratislava";

async function call(client: Client, name: string, args: Record<string, unknown>) {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = result.content.map((block) => (block.type === "text" ? block.text : "")).join("\n");
  return { result, text, structured: result.structuredContent as Record<string, unknown> };
}

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let holder: Holder;
  let dataDir: string;
  let f: Awaited<ReturnType<typeof startForwarder>>;
  let endpoint: AgentEndpoint;
  let agent: Client;
  let forwarderCode: string;
  let intentId: string;
  let subscriptionId: string;
  let consentUrl: string;
  let holderDb: Kysely<PushTables & DeliveryTables>;
  const email = "forwarded.person@example.sk";

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-forwarder-e2e-"));
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
    agent = new Client({ name: "e2e-agent", version: "1.0.0" });
    await agent.connect(new StreamableHTTPClientTransport(f.mcpUrl, { fetch: scopedSignalFetch() }));
  });
  afterAll(async () => {
    await agent?.close();
    await f?.close();
    await holder?.close();
    await endpoint?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it("lists the holder's eight tools and the two push tools", async () => {
    const { tools } = await agent.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(
      [
        "intent_demand_summary",
        "intent_get_intent",
        "intent_list_matches",
        "intent_publish_intent",
        "intent_search_offers",
        "intent_submit_offer",
        "intent_subscribe_events",
        "intent_unsubscribe_events",
        "intent_update_intent",
        "intent_withdraw_intent",
      ].sort(),
    );
  });

  it("publishes through the forwarder: the agent gets a forwarder code, never the holder's", async () => {
    const { result, text, structured } = await call(agent, "intent_publish_intent", {
      statement,
      criteria: { category: "vehicles", make: "Škoda", model: "Octavia", fuel: "diesel" },
      area: { country: "SK", region: "SK-BL" },
      budget: { amount: 20_000, currency: "EUR" },
    });
    expect(result.isError).not.toBe(true);
    forwarderCode = structured.intentCode as string;
    expect(forwarderCode).toMatch(/^fc_[0-9A-Za-z]{32}$/);
    expect(text).not.toMatch(/\bic_[0-9A-Za-z]+/);
    expect(structured.consentUrl).toMatch(new RegExp(`^${holder.summary.publicUrl}/consent/`));
    intentId = (structured.intent as { id: string }).id;
    consentUrl = structured.consentUrl as string;
    expect(text).toContain("Give the person this link");
  });

  it("reads the intent with the forwarder code; a wrong code is refused as unknown", async () => {
    const { structured } = await call(agent, "intent_get_intent", { intentCode: forwarderCode });
    expect(structured).toMatchObject({ id: intentId, status: "awaiting_consent", statement });
    const wrong = await call(agent, "intent_get_intent", {
      intentCode: "fc_0000000000000000000000000000000A",
    });
    expect(wrong.result.isError).toBe(true);
    expect(wrong.text).toContain("ERR_HOLDER_NOT_FOUND");
  });

  it("the person confirms at the holder; the agent subscribes through the forwarder and the person approves at the holder", async () => {
    const mailbox = holder.context.mailer as LocalMailbox;
    // The person opens the consentUrl the agent passed on (its last segment is the token).
    await holder.services.consent.giveConsent(consentUrl.slice(consentUrl.lastIndexOf("/") + 1), {
      email,
      accepted: true,
    });
    const [confirmation] = await mailbox.listMailbox({ to: email, limit: 1 });
    const confirm = /\/confirm\/([0-9A-Za-z]+)/.exec(confirmation?.text ?? "")?.[1] as string;
    await holder.services.consent.confirmEmail(confirm);

    const { result, structured } = await call(agent, "intent_subscribe_events", {
      intentCode: forwarderCode,
      delivery: { url: endpoint.url, secret: endpoint.secret },
    });
    expect(result.isError, JSON.stringify(result.content)).not.toBe(true);
    subscriptionId = structured.subscriptionId as string;
    expect(structured).toMatchObject({
      specVersion: "0.4",
      type: "push-subscription",
      approval: "sent-to-verified-channel",
    });
    // Rule 1: the agent's endpoint was challenged before the holder was asked.
    expect(endpoint.control.challenges).toBeGreaterThanOrEqual(1);
    // The forwarder's own id, not the holder's.
    const holderIds = (await holderDb.selectFrom("holder_push").select("id").execute()).map((r) => r.id);
    expect(holderIds).toHaveLength(1);
    expect(holderIds).not.toContain(subscriptionId);

    // The holder's challenge reached the relay and the forwarder answered it. (Approving while that
    // challenge is in flight loses the approval: a delivery-engine race reported with this work.)
    await until(async () => {
      const row = await holderDb.selectFrom("delivery_subscriptions").select("verified").executeTakeFirst();
      return row?.verified === 1;
    });
    // Rule 3: the person approves at the holder, through the link mailed to them.
    const mails = await mailbox.listMailbox({ to: email, limit: 20 });
    const approval = mails.find((mail) => mail.subject.startsWith("Allow an assistant"));
    expect(approval?.text).toContain("relayed through");
    const approvalToken = /\/notifications\/([0-9A-Za-z]+)/.exec(approval?.text ?? "")?.[1] as string;
    await (holder.services.push as PushService).approveByToken(approvalToken);
  });

  it("an offer at the holder rings the agent's endpoint with the forwarder's subscriptionId, and the match reads through the forwarder", async () => {
    const before = endpoint.doorbells.length;
    await holder.services.offers.importCatalogue([
      {
        source: { kind: "catalogue", ref: "fwd-e2e-1", seller: "Autobazár Senec" },
        title: "Škoda Octavia Combi 2.0 TDI",
        category: "vehicles",
        price: { amount: 13_900, currency: "EUR" },
        location: { country: "SK", region: "SK-BL" },
        url: "https://cars.example.sk/octavia",
        attributes: { make: "Škoda", model: "Octavia", year: 2019, mileageKm: 98_000, fuel: "diesel" },
        publishedAt: new Date().toISOString(),
      },
    ]);
    await until(
      () => endpoint.doorbells.slice(before).some((d) => d.type === "intent.matches.delivered"),
      20_000,
    );
    const rung = endpoint.doorbells.slice(before).find((d) => d.type === "intent.matches.delivered");
    expect(Object.keys(rung?.data ?? {})).toEqual(["subscriptionId", "newMatches", "latestDeliveredAt"]);
    expect(rung?.data.subscriptionId).toBe(subscriptionId);
    expect(rung?.data.newMatches).toBe(1);
    expect(JSON.stringify(rung)).not.toContain("Octavia");

    const { structured } = await call(agent, "intent_list_matches", { intentCode: forwarderCode });
    const matches = structured.matches as { offer: { title: string }; deliveredAt: string }[];
    expect(matches.map((m) => m.offer.title)).toEqual(["Škoda Octavia Combi 2.0 TDI"]);
    const since = await call(agent, "intent_list_matches", {
      intentCode: forwarderCode,
      since: matches[0]?.deliveredAt,
    });
    expect(since.structured.matches).toEqual([]);
  });

  it("unsubscribing through the forwarder ends both sides", async () => {
    const { structured } = await call(agent, "intent_unsubscribe_events", {
      intentCode: forwarderCode,
      subscriptionId,
    });
    expect(structured).toMatchObject({ subscriptionId, status: "ended" });
    const rows = await holderDb.selectFrom("delivery_subscriptions").select(["status"]).execute();
    expect(rows.map((r) => r.status)).toEqual(["ended"]);
    const again = await call(agent, "intent_unsubscribe_events", {
      intentCode: "fc_0000000000000000000000000000000A",
      subscriptionId,
    });
    expect(again.result.isError).toBe(true);
  });

  it("withdraws through the forwarder", async () => {
    const { structured } = await call(agent, "intent_withdraw_intent", { intentCode: forwarderCode });
    expect(structured).toEqual({ status: "withdrawn" });
  });
});
