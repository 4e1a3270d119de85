// The holder speaks MCP Events (push profile open question 1): an agent follows an intent by its
// code with `intent.matches.delivered` and `intent.status.changed`, by poll, push or webhook,
// through the real createHolder (its change feed wakes exactly that intent's subscriptions).
import { once } from "node:events";
import fs from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { type EventOccurrence, EventsClient, type EventsSubscription } from "@doorbell/mcp-events";
import { forEachEngine } from "@doorbell/store/testing";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createHolder, type Holder } from "../../src/app/holder.js";
import { MATCHES_DELIVERED, STATUS_CHANGED } from "../../src/events/index.js";
import type { LocalMailbox } from "../../src/mail/local-mailbox.js";
import { basicPublish, octavia, type Published, tokenOf } from "../support/mcp-harness.js";

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let holder: Holder;
  let mcpUrl: URL;
  let dataDir: string;
  const clients: (Client | EventsClient)[] = [];

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-events-"));
    holder = await createHolder({
      database: engine.url,
      dataDir,
      log: pino({ level: "silent" }),
      mcp: { toolRateLimit: false, sessionRateLimit: false },
      // Checks at their interval only once a minute: an event within seconds was woken by the holder.
      events: { tuning: { pushIntervalMs: 60_000, nextPollMs: 1_000 } },
    });
    const { url } = await holder.listen(0);
    mcpUrl = new URL(`${url}/mcp`);
  });
  afterAll(async () => {
    for (const client of clients.splice(0)) await client.close().catch(() => undefined);
    await holder?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  async function connect(): Promise<Client> {
    // SDK v2, negotiating: the holder's /mcp speaks 2026-07-28, so the events are followed there.
    const client = new Client(
      { name: "events-test", version: "1.0.0" },
      { versionNegotiation: { mode: "auto" } },
    );
    await client.connect(new StreamableHTTPClientTransport(mcpUrl));
    clients.push(client);
    return client;
  }

  function eventsClient(more: Partial<ConstructorParameters<typeof EventsClient>[0]> = {}): EventsClient {
    const events = new EventsClient({ connect, pollFloorMs: 200, ...more });
    clients.push(events);
    return events;
  }

  async function publish(client: Client, args: Record<string, unknown> = basicPublish()): Promise<Published> {
    const result = await client.callTool({ name: "intent_publish_intent", arguments: args });
    return result.structuredContent as unknown as Published;
  }

  async function confirm(published: Published, email: string): Promise<void> {
    await holder.services.consent.giveConsent(tokenOf(published.consentUrl), { email, accepted: true });
    const mailbox = holder.context.mailer as LocalMailbox;
    const [mail] = await mailbox.listMailbox({ to: email, limit: 1 });
    const token = /\/confirm\/([0-9A-Za-z]+)/.exec(mail?.text ?? "")?.[1];
    if (token === undefined) throw new Error("no confirmation mail");
    await holder.services.consent.confirmEmail(token);
  }

  async function activeIntent(
    client: Client,
    email: string,
    args: Record<string, unknown> = basicPublish(),
  ): Promise<Published> {
    const published = await publish(client, args);
    await confirm(published, email);
    return published;
  }

  async function listed(client: Client, intentCode: string) {
    const result = await client.callTool({ name: "intent_list_matches", arguments: { intentCode } });
    return (result.structuredContent as { matches: unknown[] }).matches;
  }

  it("each session lists both intent event types, with intentCode as their parameter", async () => {
    const client = await connect();
    expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
    expect(client.getServerCapabilities()?.extensions).toHaveProperty(["io.modelcontextprotocol/events"]);
    const listedTypes = await client.request(
      { method: "events/list", params: {} },
      z.object({
        events: z.array(z.object({ name: z.string(), delivery: z.array(z.string()), inputSchema: z.any() })),
      }),
    );
    expect(listedTypes.events.map((e) => e.name)).toEqual([MATCHES_DELIVERED, STATUS_CHANGED]);
    for (const type of listedTypes.events) {
      expect(type.delivery).toEqual(expect.arrayContaining(["poll", "push", "webhook"]));
      expect(type.inputSchema.required).toEqual(["intentCode"]);
    }
  });

  it("poll: a new match arrives carrying what intent_list_matches shows for it", async () => {
    const client = await connect();
    const intent = await activeIntent(client, "poll@example.sk", carIntent("Fabia"));
    const sub = await eventsClient().subscribe(
      MATCHES_DELIVERED,
      { intentCode: intent.intentCode },
      { delivery: "poll" },
    );
    expect(sub.mode).toBe("poll");
    await holder.services.offers.importCatalogue([carOffer("Fabia", "Polled Octavia")]);
    const [event] = await take(sub, 1);
    expect(event?.data).toEqual((await listed(client, intent.intentCode))[0]);
    expect((event?.data as { offer?: { title: string } } | undefined)?.offer?.title).toBe("Polled Octavia");
  });

  it("push: the match wakes the stream at once (the interval check is a minute away)", async () => {
    const client = await connect();
    const intent = await activeIntent(client, "push@example.sk", carIntent("Superb"));
    const sub = await eventsClient().subscribe(MATCHES_DELIVERED, { intentCode: intent.intentCode });
    expect(sub.mode).toBe("push");
    await waitActive(sub);
    await holder.services.offers.importCatalogue([carOffer("Superb", "Pushed Octavia")]);
    const [event] = await take(sub, 1, 5_000);
    expect(event?.data).toEqual((await listed(client, intent.intentCode))[0]);
  });

  it("push in SEP-3415 on the 2026-07-28 endpoint: notifications routed by their subscriptionId", async () => {
    const client = await connect();
    const intent = await activeIntent(client, "sep@example.sk", carIntent("Enyaq"));
    const sub = await eventsClient({ dialect: "sep-3415" }).subscribe(MATCHES_DELIVERED, {
      intentCode: intent.intentCode,
    });
    expect(sub.mode).toBe("push");
    await waitActive(sub);
    await holder.services.offers.importCatalogue([carOffer("Enyaq", "Streamed Enyaq")]);
    const [event] = await take(sub, 1, 5_000);
    expect((event?.data as { offer?: { title: string } } | undefined)?.offer?.title).toBe("Streamed Enyaq");
  });

  it("webhook: an intentCode is no authenticated principal, so a webhook subscription is Forbidden", async () => {
    // Issue 15: webhook subscriptions need an OAuth token's subject; intentCode agents poll or
    // stream (above), or take the push profile's intent_subscribe_events for webhooks.
    const client = await connect();
    const intent = await activeIntent(client, "hook@example.sk", carIntent("Kodiaq"));
    const receiver = createServer((_req, res) => res.writeHead(503).end());
    receiver.listen(0, "127.0.0.1");
    await once(receiver, "listening");
    try {
      const events = eventsClient({
        webhook: { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks` },
      });
      await expect(
        events.subscribe(MATCHES_DELIVERED, { intentCode: intent.intentCode }, { delivery: "webhook" }),
      ).rejects.toMatchObject({ code: "ERR_EVENTS_UNAUTHORIZED" });
    } finally {
      receiver.closeAllConnections();
      receiver.close();
    }
  });

  it("a code's events never show another intent's data; an unknown code is Unauthorized", async () => {
    const client = await connect();
    const mine = await activeIntent(client, "mine@example.sk", {
      ...carIntent("Scala"),
      visibility: "pseudonymous",
    });
    const other = await activeIntent(client, "other@example.sk", carIntent("Scala"));
    const events = eventsClient();
    const otherSub = await events.subscribe(
      MATCHES_DELIVERED,
      { intentCode: other.intentCode },
      { delivery: "poll" },
    );
    const mineSub = await events.subscribe(
      MATCHES_DELIVERED,
      { intentCode: mine.intentCode },
      { delivery: "poll" },
    );
    await holder.services.offers.importCatalogue([carOffer("Scala", "For both")]);
    // A seller's reply to `mine` is a match of `mine` only.
    const { publishedAt: _, source: __, ...reply } = carOffer("Scala", "A reply to mine");
    await holder.services.offers.submitReply({
      ...reply,
      source: { kind: "reply" },
      inReplyTo: mine.intent.id,
    });
    const got = await take(mineSub, 2);
    expect(got.map((e) => (e.data as { offer: { title: string } }).offer.title).sort()).toEqual([
      "A reply to mine",
      "For both",
    ]);
    // The other intent sees its own match of the catalogue offer, never the reply to mine.
    const others = await takeFor(otherSub, 1_500);
    expect(others.map((e) => (e.data as { offer: { title: string } }).offer.title)).toEqual(["For both"]);
    await expect(
      (await connect()).request(
        {
          method: "events/poll",
          params: { name: MATCHES_DELIVERED, params: { intentCode: "ic_nobody" }, cursor: null },
        },
        z.object({}).passthrough(),
      ),
    ).rejects.toMatchObject({ code: -32012 });
  });

  it("intent.status.changed: confirming and withdrawing are pushed as they happen", async () => {
    const client = await connect();
    const published = await publish(client, carIntent("Karoq"));
    const sub = await eventsClient().subscribe(STATUS_CHANGED, { intentCode: published.intentCode });
    await waitActive(sub);
    await confirm(published, "status@example.sk");
    await client.callTool({
      name: "intent_withdraw_intent",
      arguments: { intentCode: published.intentCode },
    });
    const seen = await take(sub, 2, 5_000);
    expect(seen.map((e) => e.data.status)).toEqual(["active", "withdrawn"]);
    expect(seen[1]?.data).toMatchObject({ previousStatus: "active", intent: { id: published.intent.id } });
    expect(JSON.stringify(seen)).not.toContain(published.intentCode);
  });
});

/** An intent for one Škoda model, and offers of it: each test follows its own model, unseen by the others. */
function carIntent(model: string) {
  return basicPublish({
    statement: `A Škoda ${model}, diesel, near Bratislava`,
    criteria: { category: "vehicles", make: "Škoda", model, fuel: "diesel", mileageMaxKm: 120_000 },
  });
}

function carOffer(model: string, title: string) {
  return octavia({
    title,
    attributes: { make: "Škoda", model, year: 2019, mileageKm: 98_000, fuel: "diesel" },
  });
}

/** Lets a push stream reach `active` before the upstream changes (its start is "now"). */
async function waitActive(sub: EventsSubscription): Promise<void> {
  for (let i = 0; i < 100 && sub.cursor === null; i++)
    await new Promise((resolve) => setTimeout(resolve, 20));
}

/** Every event that arrives within `ms`. */
async function takeFor(sub: EventsSubscription, ms: number): Promise<EventOccurrence[]> {
  const out: EventOccurrence[] = [];
  const iterator = sub[Symbol.asyncIterator]();
  const end = Date.now() + ms;
  for (;;) {
    const left = end - Date.now();
    if (left <= 0) return out;
    const next = await Promise.race([
      iterator.next(),
      new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), left).unref()),
    ]);
    if (next === undefined || next.done) return out;
    out.push(next.value);
  }
}

async function take(sub: EventsSubscription, count: number, ms = 10_000): Promise<EventOccurrence[]> {
  const out: EventOccurrence[] = [];
  const iterator = sub[Symbol.asyncIterator]();
  const deadline = new Promise<never>((_, reject) => {
    setTimeout(() => reject(new Error(`timed out after ${out.length} of ${count} events`)), ms).unref();
  });
  while (out.length < count) {
    const next = await Promise.race([iterator.next(), deadline]);
    if (next.done) break;
    out.push(next.value);
  }
  return out;
}
