/**
 * A real holder behind a real forwarder, for the §7 rule 6 tests: the holder on loopback (its own
 * database, so its delivery engine never sees the forwarder's), an agent connected to the
 * forwarder over MCP, an intent published through it, confirmed by the person and its doorbell
 * subscription approved, and what the holder's side then looks like. `startOlderHolder` puts the
 * holder behind a proxy that makes it what a holder built before end requests was.
 */
import { once } from "node:events";
import { createServer, request as httpRequest } from "node:http";
import type { DeliveryTables } from "@doorbell/delivery";
import {
  createHolder,
  type Holder,
  type LocalMailbox,
  type PushService,
  type PushTables,
  scopedSignalFetch,
} from "@doorbell/holder";
import { asTables } from "@doorbell/store";
import { freePort } from "@doorbell/store/testing";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { pino } from "pino";
import { expect } from "vitest";
import type { AgentEndpoint } from "./forwarder-harness.js";
import { until } from "./forwarder-harness.js";

/** A holder on loopback at `publicUrl` (default: its own port); `database` shared by several processes. */
export async function startHolder(options: {
  dataDir: string;
  database?: string;
  publicUrl?: string;
}): Promise<{ holder: Holder; origin: string }> {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const holder = await createHolder({
    dataDir: options.dataDir,
    ...(options.database === undefined ? {} : { database: options.database }),
    publicUrl: options.publicUrl ?? origin,
    mcp: { toolRateLimit: false, sessionRateLimit: false },
    log: pino({ level: "silent" }),
  });
  await holder.listen(port, "127.0.0.1");
  return { holder, origin };
}

/**
 * The same holder as one built before end requests: a loopback proxy in front of it serves its
 * descriptor without `push` and answers `/push/end` 404, as such a holder does; the rest passes.
 * The holder's public URL must be the proxy's origin.
 */
export async function startOlderHolder(options: { dataDir: string }) {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const { holder, origin: behind } = await startHolder({ ...options, publicUrl: origin });
  const target = new URL(behind);
  const proxy = createServer((req, res) => {
    if (req.url === "/.well-known/isto-intents.json") {
      void fetch(`${behind}${req.url}`, { headers: { host: target.host } })
        .then((answer) => answer.json())
        .then((descriptor: Record<string, unknown>) => {
          const { push: _endUrl, ...older } = descriptor;
          res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(older));
        });
      return;
    }
    if (req.url?.startsWith("/push/end") === true) {
      req.resume();
      res.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end("Not found\n");
      return;
    }
    const forwarded = httpRequest(
      { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forwarded.on("error", () => res.destroy());
    req.pipe(forwarded);
  });
  proxy.listen(port, "127.0.0.1");
  await once(proxy, "listening");
  return {
    holder,
    origin,
    async close() {
      await new Promise<void>((resolve) => {
        proxy.close(() => resolve());
        proxy.closeAllConnections();
      });
      await holder.close();
    },
  };
}

export async function connectAgent(url: URL): Promise<Client> {
  const client = new Client({ name: "rule6-agent", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(url, { fetch: scopedSignalFetch() }));
  return client;
}

export async function call(client: Client, name: string, args: Record<string, unknown>) {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  expect(result.isError, JSON.stringify(result.content)).not.toBe(true);
  return result.structuredContent as Record<string, unknown>;
}

/** What the holder keeps of its push subscriptions, read from its own database. */
export function holderSide(holder: Holder) {
  const db = asTables<PushTables & DeliveryTables>(holder.context.store).db;
  return {
    db,
    /** The same database as the holder's delivery engine takes it. */
    deliveryDb: asTables<DeliveryTables>(holder.context.store).db,
    subscription: (id: string) =>
      db
        .selectFrom("delivery_subscriptions")
        .select(["status", "ended_reason", "verified"])
        .where("id", "=", id)
        .executeTakeFirstOrThrow(),
    /** End requests acted on for this subscription (one per webhook-id). */
    endRequests: async (id: string) =>
      (
        await db
          .selectFrom("holder_push_end_seen")
          .select("webhook_id")
          .where("subscription_id", "=", id)
          .execute()
      ).length,
    /** Doorbells given up on: a 410 from the relay leaves one ("gone"). */
    deadLetters: async (id: string) =>
      (await db.selectFrom("delivery_dead_letters").select("id").where("subscription_id", "=", id).execute())
        .length,
  };
}

/**
 * Publish through the forwarder, confirm at the holder, subscribe, approve: both sides active.
 * Answers the codes and ids, and the person's manage page (from the confirmation mail).
 */
export async function subscribedAndApproved(
  parts: {
    holder: Holder;
    agent: Client;
    endpoint: AgentEndpoint;
    relayOf: (id: string) => Promise<{ holder_subscription_id: string | null }>;
  },
  email: string,
) {
  const { holder, agent, endpoint } = parts;
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
  const managePath = /\/manage\/[0-9A-Za-z]+/.exec(confirmation?.text ?? "")?.[0] as string;
  await holder.services.consent.confirmEmail(
    /\/confirm\/([0-9A-Za-z]+)/.exec(confirmation?.text ?? "")?.[1] as string,
  );
  const subscribed = await call(agent, "intent_subscribe_events", {
    intentCode: forwarderCode,
    delivery: { url: endpoint.url, secret: endpoint.secret },
  });
  const subscriptionId = subscribed.subscriptionId as string;
  const holderId = (await parts.relayOf(subscriptionId)).holder_subscription_id as string;
  const side = holderSide(holder);
  await until(async () => (await side.subscription(holderId)).verified === 1);
  const mails = await mailbox.listMailbox({ to: email, limit: 20 });
  const approval = mails.find((mail) => mail.subject.startsWith("Allow an assistant"));
  await (holder.services.push as PushService).approveByToken(
    /\/notifications\/([0-9A-Za-z]+)/.exec(approval?.text ?? "")?.[1] as string,
  );
  expect(await side.subscription(holderId)).toMatchObject({ status: "active" });
  return { forwarderCode, subscriptionId, holderId, managePath };
}

let offers = 0;

/** A matching offer at the holder: one doorbell towards every subscription of the Fabia intents. */
export async function offerArrives(holder: Holder): Promise<void> {
  offers++;
  await holder.services.offers.importCatalogue([
    {
      source: { kind: "catalogue", ref: `fwd-rule6-${offers}-${Date.now()}`, seller: "Autobazár Košice" },
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
