/**
 * MCP Events across real processes: `doorbell serve` processes on one database, a separate
 * `doorbell catalogue import` process recording the matches, mail through a real SMTP server on
 * loopback. It proves that an Events subscriber is served whichever process it talked to, and
 * whichever process recorded the change (the change bus, packages/holder/src/cluster/change-bus.ts):
 *
 * PostgreSQL, three serve processes behind a plain round-robin proxy:
 *   an intent is published, consented and confirmed through the proxy → the person signs in by
 *   OAuth (sign-in link by mail) → the AI SDK (`@ai-sdk/mcp` `experimental_events`) subscribes by
 *   webhook to `intent.matches.delivered`, its receiver the AI SDK's own → the serve process that
 *   answered the subscribe is SIGKILLed → an `events/stream` client (`EventsClient`, push) and a
 *   `subscriptions/listen` client for the intent's push subscription resource connect to the two
 *   survivors; the signed-in person reads a push subscription resource of their own intent → an
 *   import process records matches → every match reaches the AI SDK's receiver once per eventId,
 *   with no refresh by the client, and reaches the stream; the listener hears of every change-bus
 *   message naming its subscription → the AI SDK refreshes through the proxy (another process):
 *   the same subscription → a receiver that refuses one event always gets the events after it
 *   while that one is still being retried (per-event retries, the same webhook-id each time).
 *
 * SQLite, one serve process and an import process on the same file: subscribe, every match once,
 * a refresh is the same subscription; a `subscriptions/listen` client hears the import's change,
 * which only the notifications table can have told the serve process.
 *
 * The two describes run at the same time, the steps within each in order. Nothing is timed: each
 * step waits for what it needs, and a wait that fails prints every process's output.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import {
  experimental_createMCPClient as createMCPClient,
  experimental_createMCPEventWebhook as createMCPEventWebhook,
} from "@ai-sdk/mcp";
import { EVENTS_RETRY_POLICY } from "@doorbell/delivery";
import { type EventOccurrence, EventsClient, type EventsSubscription } from "@doorbell/mcp-events";
import { sql } from "@doorbell/store";
import { type TestDatabase, type TestEngine, testEngines } from "@doorbell/store/testing";
import { generateSecret } from "@doorbell/webhooks";
import { getRequestListener } from "@hono/node-server";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  authorizationUrl,
  FormBrowser,
  field,
  pkce,
  registerClient,
  SCOPE,
  tokenRequest,
} from "../../holder/test/support/oauth-harness.js";
import { MemoryEventStore } from "../../mcp-events/test/interop-harness.js";
import {
  Browser,
  doorbell,
  freePort,
  type Mail,
  type Started,
  startReceiver,
  startSmtp,
  until,
} from "./cluster-harness.js";
import { type RoundRobinProxy, startRoundRobinProxy } from "./round-robin-proxy.js";

const MATCHES_DELIVERED = "intent.matches.delivered";
/** The change bus's channel (packages/holder/src/cluster/change-bus.ts). */
const CHANGES_CHANNEL = "doorbell_changes";

const engines = testEngines();
const postgres = engines.find((engine) => engine.dialect === "postgres") as TestEngine;
const sqlite = engines.find((engine) => engine.dialect === "sqlite") as TestEngine;

// ---- offers and the intent they match ---------------------------------------------------------

interface Offer {
  source: { ref: string; seller: string };
  title: string;
  category: "vehicles";
  price: { amount: number; currency: "EUR" };
  location: { country: "SK"; region: "SK-BL" };
  url: string;
  attributes: { make: "Škoda"; model: string; year: number; mileageKm: number; fuel: "diesel" };
  publishedAt: string;
}

function offer(model: string, ref: string): Offer {
  return {
    source: { ref, seller: "Autobazár Senec" },
    title: `Škoda ${model} 2.0 TDI (${ref})`,
    category: "vehicles",
    price: { amount: 13_500, currency: "EUR" },
    location: { country: "SK", region: "SK-BL" },
    url: `https://cars.example.sk/${ref.toLowerCase()}`,
    attributes: { make: "Škoda", model, year: 2019, mileageKm: 98_000, fuel: "diesel" },
    publishedAt: "2026-11-29T08:00:00Z",
  };
}

const titleOf = (data: unknown): string | undefined =>
  (data as { offer?: { title?: string } } | undefined)?.offer?.title;

// ---- the AI SDK's side: its subscription store and its own webhook receiver ---------------------

interface Post {
  webhookId: string;
  eventId: string | undefined;
  title: string | undefined;
  status: number;
}

/**
 * The AI SDK's `experimental_createMCPEventWebhook` on loopback, every POST recorded with the
 * answer it got. With `refuse`, the first event carrying that offer fixes the refused eventId,
 * answered 500 every time it comes (and never shown to the receiver), while every other event is
 * the AI SDK's to accept.
 */
async function aiSdkReceiver(store: MemoryEventStore, refuse?: { title: string }) {
  const accepted: EventOccurrence[] = [];
  const posts: Post[] = [];
  const state: { refusedEventId?: string } = {};
  const receive = createMCPEventWebhook({
    store,
    onEvent: async ({ event }) => {
      accepted.push(event as EventOccurrence);
    },
  });
  const server: Server = createServer(
    getRequestListener(async (request) => {
      const webhookId = request.headers.get("webhook-id") ?? "";
      let body: { eventId?: string; data?: unknown } | undefined;
      try {
        body = JSON.parse(await request.clone().text());
      } catch {}
      if (refuse !== undefined && state.refusedEventId === undefined && titleOf(body?.data) === refuse.title)
        state.refusedEventId = webhookId;
      const answer =
        state.refusedEventId !== undefined && webhookId === state.refusedEventId
          ? new Response("refused", { status: 500 })
          : await receive(request);
      // Not a delivery: the holder looks for a receiver document (/.well-known/mcp-webhook-receiver.json).
      if (request.method !== "POST") return answer;
      posts.push({ webhookId, eventId: body?.eventId, title: titleOf(body?.data), status: answer.status });
      return answer;
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    accepted,
    posts,
    state,
    titles: () => accepted.map((event) => titleOf(event.data)),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
type AiSdkReceiver = Awaited<ReturnType<typeof aiSdkReceiver>>;

/** Each eventId the receiver accepted, with how many times: once each is what is asserted. */
function acceptedPerEventId(receiver: AiSdkReceiver): Map<string, number> {
  const counts = new Map<string, number>();
  for (const event of receiver.accepted) counts.set(event.eventId, (counts.get(event.eventId) ?? 0) + 1);
  return counts;
}

/**
 * Every POST carried its event's id as its webhook-id, and no request was refused as badly signed,
 * malformed or for an unknown subscription (a 503 while the AI SDK saves a subscribe or refresh,
 * and the test's own 500, are retried).
 */
function expectCleanPosts(receiver: AiSdkReceiver): void {
  for (const post of receiver.posts) {
    if (post.eventId !== undefined) expect(post.webhookId).toBe(post.eventId);
    expect([200, 204, 500, 503], JSON.stringify(post)).toContain(post.status);
  }
}

// ---- the scenario's steps, for any set of processes --------------------------------------------

interface Stage {
  /** Where the pages and /mcp are reached: the proxy, or the one serve process. */
  origin: string;
  smtp: Awaited<ReturnType<typeof startSmtp>>;
  /** Arguments every process of this database gets. */
  common(): string[];
  env: Record<string, string>;
  dir: string;
  /** The serve processes, each listening on its port. */
  serves: { process: Started; port: number }[];
  /** Closed first, before the processes stop: the clients and their streams. */
  clients: (() => Promise<unknown>)[];
  /** Closed last, once every process exited (the SMTP server waits for their kept connections). */
  servers: (() => Promise<unknown>)[];
}

function newStage(
  dir: string,
  smtp: Stage["smtp"],
  origin: string,
  database: () => string,
  env: Record<string, string>,
): Stage {
  return {
    origin,
    smtp,
    env,
    dir,
    common: () => ["--database", database(), "--smtp", smtp.url, "--public-url", origin],
    serves: [],
    clients: [],
    servers: [() => smtp.close()],
  };
}

/** One `doorbell serve` of the stage on `port`, webhooks allowed to loopback. */
function serve(stage: Stage, name: string, port: number, more: string[] = []): Started {
  const process = doorbell(
    name,
    [
      "serve",
      "--port",
      String(port),
      "--no-demo",
      "--data-dir",
      path.join(stage.dir, name.replace(/\W+/g, "-")),
      ...stage.common(),
      "--webhook-policy",
      "development",
      "--limit",
      "mail.recipient=50/3600,mail.client=200/3600,mail.interaction=50/3600",
      ...more,
    ],
    stage.env,
  );
  stage.serves.push({ process, port });
  return process;
}

async function closeStage(stage: Stage | undefined): Promise<void> {
  if (stage === undefined) return;
  for (const close of stage.clients.splice(0).reverse()) await close().catch(() => undefined);
  for (const { process } of stage.serves)
    if (process.child.exitCode === null && process.child.signalCode === null) process.child.kill("SIGTERM");
  await Promise.all(stage.serves.map(({ process }) => process.exited));
  for (const close of stage.servers.splice(0).reverse()) await close().catch(() => undefined);
  fs.rmSync(stage.dir, { recursive: true, force: true });
}

const mailsTo = (stage: Stage, email: string, marker: string): Mail[] =>
  stage.smtp.mails.filter((mail) => mail.to === email && mail.text.includes(marker));

/** A modern (2026-07-28) MCP client on `mcpUrl`, optionally with a bearer token. */
async function modernClient(mcpUrl: string, token?: string): Promise<Client> {
  const client = new Client(
    { name: "events-across-processes", version: "1.0.0" },
    { versionNegotiation: { mode: "auto" } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(
      new URL(mcpUrl),
      token === undefined ? {} : { authProvider: { token: async () => token } },
    ),
  );
  return client;
}

async function tool<T>(client: Client, name: string, args: Record<string, unknown>): Promise<T> {
  const result = (await client.callTool({ name, arguments: args })) as {
    isError?: boolean;
    structuredContent?: unknown;
    content?: unknown;
  };
  if (result.isError) throw new Error(`${name} was refused: ${JSON.stringify(result.content)}`);
  return result.structuredContent as T;
}

/** Publishes a Škoda `model` intent; the person consents and confirms on the pages, by mail. */
async function publishAndConfirm(stage: Stage, agent: Client, model: string, email: string): Promise<string> {
  const published = await tool<{ intentCode: string; consentUrl: string }>(agent, "intent_publish_intent", {
    statement: `A Škoda ${model}, diesel, near Bratislava`,
    criteria: { category: "vehicles", make: "Škoda", model, fuel: "diesel" },
    area: { country: "SK", region: "SK-BL" },
    budget: { amount: 15_000, currency: "EUR" },
  });
  const browser = new Browser(stage.origin);
  const given = await browser.submit(new URL(published.consentUrl).pathname, { email, consent: "yes" });
  expect(given.status).toBe(200);
  await until(`the confirmation mail to ${email}`, () => mailsTo(stage, email, "/confirm/").length > 0);
  const confirm = new RegExp(`${stage.origin}(/confirm/[0-9A-Za-z_-]+)`).exec(
    (mailsTo(stage, email, "/confirm/")[0] as Mail).text,
  )?.[1];
  expect(confirm).toBeDefined();
  expect((await browser.submit(confirm as string, {})).status).toBe(200);
  const intent = await tool<{ status: string }>(agent, "intent_get_intent", {
    intentCode: published.intentCode,
  });
  expect(intent.status).toBe("active");
  return published.intentCode;
}

/**
 * The person signs an assistant in through the built-in authorization server, as
 * `personAllowsByForms` does (holder/test/support/oauth-harness.ts), the sign-in link read from the real
 * SMTP server; the access token for `<origin>/mcp`.
 */
async function signIn(stage: Stage, email: string): Promise<string> {
  const { origin } = stage;
  const redirectUri = "http://127.0.0.1:9/callback";
  const clientId = await registerClient(origin, redirectUri);
  const browser = new FormBrowser(origin);
  const { verifier, challenge } = pkce();
  const start = await browser.go(
    authorizationUrl(origin, { clientId, redirectUri, scope: SCOPE, challenge }),
  );
  const signInPage = await start.response.text();
  expect(signInPage).toContain("Send me a sign-in link");
  const uid = new URL(start.url).pathname.split("/")[2] as string;
  const sent = await browser.go(`/signin/${uid}/email`, { csrf: field(signInPage, "csrf"), email });
  expect(await sent.response.text()).toContain("Check your e-mail");
  await until(`the sign-in mail to ${email}`, () => mailsTo(stage, email, `/signin/${uid}/link/`).length > 0);
  const link = /https?:\/\/\S+\/signin\/\S+\/link\/[A-Za-z0-9_-]+/.exec(
    (mailsTo(stage, email, `/signin/${uid}/link/`)[0] as Mail).text,
  )?.[0] as string;
  const linkPage = await browser.go(link);
  expect(linkPage.response.status).toBe(200);
  const consent = await browser.go(link, { csrf: field(await linkPage.response.text(), "csrf") });
  const consentPage = await consent.response.text();
  expect(consentPage).toContain("Allow Test assistant to act for you?");
  // Signed in, the provider asks for consent in an interaction of its own.
  const consentUid = new URL(consent.url).pathname.split("/")[2] as string;
  const allowed = await browser.go(`/signin/${consentUid}/approve`, {
    csrf: field(consentPage, "csrf"),
    consentVersion: field(consentPage, "consentVersion"),
  });
  const arrived = new URL(allowed.url);
  expect(arrived.origin + arrived.pathname).toBe(redirectUri);
  const exchanged = await tokenRequest(origin, {
    grant_type: "authorization_code",
    client_id: clientId,
    code: arrived.searchParams.get("code") ?? "",
    redirect_uri: redirectUri,
    code_verifier: verifier,
    resource: `${origin}/mcp`,
  });
  expect(exchanged.status, await exchanged.clone().text()).toBe(200);
  return ((await exchanged.json()) as { access_token: string }).access_token;
}

/** The AI SDK's MCP client on `mcpUrl` with the person's token, sending through `fetchFn`. */
async function aiSdkClient(
  mcpUrl: string,
  token: string,
  store: MemoryEventStore,
  fetchFn: typeof fetch = fetch,
) {
  return createMCPClient({
    transport: { type: "http", url: mcpUrl, headers: { authorization: `Bearer ${token}` }, fetch: fetchFn },
    experimental_events: { store },
  });
}
type AiSdkClient = Awaited<ReturnType<typeof aiSdkClient>>;

function subscribeByWebhook(client: AiSdkClient, intentCode: string, receiver: AiSdkReceiver) {
  return client.experimental_events.subscribe({
    name: MATCHES_DELIVERED,
    arguments: { intentCode },
    delivery: { mode: "webhook", url: receiver.url, allowInsecureLocalhost: true },
  });
}

/** `doorbell catalogue import` of `offers` in a process of its own; resolves once it exited 0. */
async function importOffers(stage: Stage, name: string, offers: Offer[]): Promise<void> {
  const file = path.join(stage.dir, `${name}.json`);
  fs.writeFileSync(file, JSON.stringify(offers));
  const importer = doorbell(
    name,
    ["catalogue", "import", file, "--data-dir", path.join(stage.dir, name), ...stage.common()],
    stage.env,
  );
  expect(await importer.exited).toBe(0);
  expect(importer.out.text).toContain(`${offers.length} new matches`);
}

/** The matches `intent_list_matches` shows, by offer title. */
async function listedTitles(agent: Client, intentCode: string): Promise<string[]> {
  const listed = await tool<{ matches: unknown[] }>(agent, "intent_list_matches", { intentCode });
  return listed.matches.map((match) => titleOf(match) as string).sort();
}

/** Collects a push subscription's events as they come (the iterator runs for the whole test). */
function collect(sub: EventsSubscription): EventOccurrence[] {
  const seen: EventOccurrence[] = [];
  void (async () => {
    for await (const event of sub) seen.push(event);
  })().catch(() => undefined);
  return seen;
}

/**
 * A push-profile subscription of the intent (`intent_subscribe_events`, to a doorbell receiver of
 * the cluster harness), whose resource `isto-intents://subscription/<id>` is listened to (§8.3).
 */
async function pushSubscription(stage: Stage, agent: Client, intentCode: string) {
  const doorbells = await startReceiver(generateSecret());
  stage.servers.push(doorbells.close);
  const made = await tool<{ subscriptionId: string }>(agent, "intent_subscribe_events", {
    intentCode,
    delivery: { url: doorbells.url("listened"), secret: generateSecret() },
  });
  return { id: made.subscriptionId, uri: `isto-intents://subscription/${made.subscriptionId}` };
}

/** A `subscriptions/listen` client (SDK v2) for `uri` on `mcpUrl`; the updates it hears. */
async function listenFor(stage: Stage, mcpUrl: string, uri: string): Promise<string[]> {
  const updates: string[] = [];
  const listener = await modernClient(mcpUrl);
  stage.clients.push(() => listener.close());
  listener.setNotificationHandler("notifications/resources/updated", (notification) => {
    updates.push(notification.params.uri);
  });
  const listening = await listener.listen({ resourceSubscriptions: [uri] });
  stage.clients.push(() => listening.close());
  expect(listening.honoredFilter.resourceSubscriptions).toEqual([uri]);
  return updates;
}

const sorted = (values: readonly (string | undefined)[]) => [...values].sort();

// ---- PostgreSQL: three serve processes behind a round-robin proxy ------------------------------
// The two describes run at the same time (their processes start while the other's wait); the
// steps within each run in order.

describe.skipIf(postgres.skipReason !== undefined)(
  "MCP Events across three doorbell serve processes and an import process (PostgreSQL)",
  { concurrent: true },
  () => {
    const step = { concurrent: false, timeout: 45_000 };
    const email = "events.person@example.sk";
    const model = "Superb";
    const firstImport = [offer(model, "EVT-1"), offer(model, "EVT-2")];
    const secondImport = [offer(model, "EVT-3"), offer(model, "EVT-4")];
    /** The refusing receiver refuses the match of this offer, every time. */
    const refusedOffer = firstImport[0] as Offer;
    const store = new MemoryEventStore();
    let database: TestDatabase;
    let proxy: RoundRobinProxy;
    let stage: Stage;
    let agent: Client;
    let intentCode: string;
    let token: string;
    let receiver: AiSdkReceiver;
    let refusing: AiSdkReceiver;
    let client: AiSdkClient;
    let subscriptionId: string;
    let refusingSubscriptionId: string;
    let killed: Started;
    let survivors: number[];
    let streamed: EventOccurrence[];
    let push: { id: string; uri: string };
    let resourceUpdates: string[];
    /** Every change-bus message, as every process hears it. */
    const bus: { m?: string[]; s?: string; p?: string[] }[] = [];
    const busNamingPush = () => bus.filter((message) => message.p?.includes(push.id));

    beforeAll(async () => {
      database = await postgres.createDatabase();
      const ports = [await freePort(), await freePort(), await freePort()];
      proxy = await startRoundRobinProxy(ports.map((port) => `http://127.0.0.1:${port}`));
      stage = newStage(
        fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-events-processes-")),
        await startSmtp(),
        proxy.url,
        () => database.url,
        { DOORBELL_SEAL_KEYS: `events1:${randomBytes(32).toString("base64")}` },
      );
      stage.servers.push(() => proxy.close());
      // All three start at once on the fresh database, as a deployment's replicas do.
      const started = ports.map((port, index) =>
        serve(stage, `serve ${index + 1}`, port, ["--trust-proxy", "127.0.0.1/32"]),
      );
      receiver = await aiSdkReceiver(store);
      refusing = await aiSdkReceiver(store, { title: refusedOffer.title });
      stage.servers.push(receiver.close, refusing.close);
      const unlisten = await database.db.listen(CHANGES_CHANNEL, (payload) => {
        if (payload !== undefined) bus.push(JSON.parse(payload));
      });
      stage.clients.push(unlisten);
      await Promise.all(started.map((process) => process.waitFor("Ctrl+C stops", 80_000)));
    }, 90_000);

    afterAll(async () => {
      await closeStage(stage);
      await postgres.cleanup();
    }, 60_000);

    it(
      "publishes and confirms an intent through the proxy; the person signs in by OAuth with the mailed link",
      step,
      async () => {
        agent = await modernClient(`${proxy.url}/mcp`);
        stage.clients.push(() => agent.close());
        intentCode = await publishAndConfirm(stage, agent, model, email);
        token = await signIn(stage, email);
        // Round robin reached every process.
        expect(proxy.answered.every((count) => count > 0)).toBe(true);
      },
    );

    it(
      "subscribes by the AI SDK through the proxy; the process that answered events/subscribe is SIGKILLed",
      step,
      async () => {
        // Which upstream answered each events/subscribe: the proxy counts answers per upstream, and
        // nothing else goes through it while this client's requests do.
        const answeredBy: number[][] = [];
        const tracing: typeof fetch = async (input, init) => {
          const method =
            typeof init?.body === "string"
              ? (JSON.parse(init.body) as { method?: string }).method
              : undefined;
          const before = [...proxy.answered];
          const response = await fetch(input, init);
          if (method === "events/subscribe")
            answeredBy.push(
              proxy.answered.flatMap((count, index) => (count > (before[index] ?? 0) ? [index] : [])),
            );
          return response;
        };
        client = await aiSdkClient(`${proxy.url}/mcp`, token, store, tracing);
        stage.clients.push(() => client.close());
        const made = await subscribeByWebhook(client, intentCode, receiver);
        expect(made.truncated).toBe(false);
        subscriptionId = made.id;
        expect(answeredBy).toEqual([[expect.any(Number)]]);
        const answering = answeredBy[0]?.[0] as number;

        // A second subscription of the same person and intent, to a receiver that refuses one event.
        const refusingMade = await subscribeByWebhook(client, intentCode, refusing);
        refusingSubscriptionId = refusingMade.id;
        expect(refusingSubscriptionId).not.toBe(subscriptionId);

        // The process dies with no delivery in hand: the challenges went out and their leases were
        // given back (a process killed holding a lease is the scale-out test's case: the others wait
        // for the lease to run out).
        await until("no delivery lease held", async () => {
          const held = await sql<{ n: number }>`
            select count(*)::int as n from delivery_subscriptions where lease_until > ${Date.now()}`.execute(
            database.db.db,
          );
          return held.rows[0]?.n === 0;
        });
        killed = stage.serves[answering]?.process as Started;
        killed.child.kill("SIGKILL");
        await killed.exited;
        survivors = stage.serves.filter((_, index) => index !== answering).map(({ port }) => port);
      },
    );

    it(
      "connects an events/stream client and a subscriptions/listen client to the two survivors",
      step,
      async () => {
        const [streamPort, listenPort] = survivors as [number, number];
        const events = new EventsClient({
          connect: () => modernClient(`http://127.0.0.1:${streamPort}/mcp`),
        });
        stage.clients.push(() => events.close());
        const sub = await events.subscribe(MATCHES_DELIVERED, { intentCode });
        expect(sub.mode).toBe("push");
        await until("the stream active", () => sub.cursor !== null);
        streamed = collect(sub);

        push = await pushSubscription(stage, agent, intentCode);
        resourceUpdates = await listenFor(stage, `http://127.0.0.1:${listenPort}/mcp`, push.uri);
      },
    );

    it(
      "lets the signed-in person read the push subscription resource of their own intent on 2026-07-28",
      step,
      async () => {
        // The person's assistant publishes with the token (the intent is theirs, active at once) and
        // subscribes to its doorbells with the intentCode; reading the resource has no intentCode to
        // give, so the token is what may read it (subscription-resource.ts).
        const owner = await modernClient(`http://127.0.0.1:${survivors[1]}/mcp`, token);
        stage.clients.push(() => owner.close());
        const published = await tool<{ intentCode: string; intent: { id: string; status: string } }>(
          owner,
          "intent_publish_intent",
          {
            statement: "A Škoda Scala, petrol, near Bratislava",
            criteria: { category: "vehicles", make: "Škoda", model: "Scala", fuel: "petrol" },
            area: { country: "SK", region: "SK-BL" },
            budget: { amount: 15_000, currency: "EUR" },
          },
        );
        expect(published.intent.status).toBe("active");
        // The token reaches the intent: it is the person's.
        expect(
          await tool<{ id: string }>(owner, "intent_get_intent", { id: published.intent.id }),
        ).toMatchObject({
          id: published.intent.id,
        });
        const own = await pushSubscription(stage, owner, published.intentCode);
        const read = await owner.readResource({ uri: own.uri });
        expect(JSON.parse((read.contents[0] as { text: string }).text)).toMatchObject({
          subscriptionId: own.id,
        });
      },
    );

    it(
      "an import process's matches reach the AI SDK's receiver once per eventId, the stream and the listener",
      step,
      async () => {
        await importOffers(stage, "import-1", firstImport);
        const titles = firstImport.map((o) => o.title).sort();
        expect(await listedTitles(agent, intentCode)).toEqual(titles);
        // The import told the other processes through the change bus.
        expect(bus.some((message) => message.m !== undefined)).toBe(true);

        await until("every match at the AI SDK's receiver", () => receiver.accepted.length >= titles.length);
        await until("every match on the stream", () => streamed.length >= titles.length);
        await until(
          "a resource update for every change-bus message naming the push subscription",
          () => busNamingPush().length > 0 && resourceUpdates.length >= busNamingPush().length,
        );
        expect(sorted(receiver.titles())).toEqual(titles);
        expect([...acceptedPerEventId(receiver).values()]).toEqual(titles.map(() => 1));
        expect(sorted(streamed.map((event) => titleOf(event.data)))).toEqual(titles);
        expect(new Set(streamed.map((event) => event.eventId)).size).toBe(titles.length);
        expect(new Set(resourceUpdates)).toEqual(new Set([push.uri]));
        // The AI SDK never refreshed: both subscriptions as they were made, active.
        expect(new Map([...store.byKey.values()].map((s) => [s.id, s.status]))).toEqual(
          new Map([
            [subscriptionId, "active"],
            [refusingSubscriptionId, "active"],
          ]),
        );
        expectCleanPosts(receiver);
      },
    );

    it("refreshes through another process: the same subscription", step, async () => {
      const index = stage.serves.findIndex(({ process }) => process === killed);
      const before = proxy.answered[index];
      const refreshed = await client.experimental_events.refresh({ id: subscriptionId });
      expect(refreshed.id).toBe(subscriptionId);
      // The killed process answered nothing more: the proxy went past it.
      expect(proxy.answered[index]).toBe(before);
    });

    it(
      "a receiver refusing one event always gets the events after it while that one is still retried",
      step,
      async () => {
        await until("the refused event refused", () => refusing.posts.some((post) => post.status === 500));
        await importOffers(stage, "import-2", secondImport);
        const later = secondImport.map((o) => o.title).sort();
        await until("the later matches at the refusing receiver", () =>
          later.every((title) => refusing.titles().includes(title)),
        );
        // Not held back by the refused one: that one is not given up yet (retries left, no dead letter).
        const refusals = refusing.posts.filter((post) => post.webhookId === refusing.state.refusedEventId);
        expect(refusals.length).toBeLessThanOrEqual(EVENTS_RETRY_POLICY.delaysMs.length);
        const dead = await sql<{ n: number }>`select count(*)::int as n from delivery_dead_letters`.execute(
          database.db.db,
        );
        expect(dead.rows[0]?.n).toBe(0);
        // Retries keep the webhook-id: every refusal is of the one event.
        expect(refusals.every((post) => post.status === 500 && post.title === refusedOffer.title)).toBe(true);
        expect(sorted(refusing.titles())).toEqual(
          sorted(
            [...firstImport, ...secondImport].map((o) => o.title).filter((t) => t !== refusedOffer.title),
          ),
        );
        expect([...acceptedPerEventId(refusing).values()].every((count) => count === 1)).toBe(true);

        // The refreshed subscription, the stream and the listener have the later matches too, each once.
        const all = [...firstImport, ...secondImport].map((o) => o.title).sort();
        await until("every match at the AI SDK's receiver", () => receiver.accepted.length >= all.length);
        await until("every match on the stream", () => streamed.length >= all.length);
        await until(
          "a resource update for every change-bus message naming the push subscription",
          () => busNamingPush().length >= 2 && resourceUpdates.length >= busNamingPush().length,
        );
        expect(sorted(receiver.titles())).toEqual(all);
        expect([...acceptedPerEventId(receiver).values()]).toEqual(all.map(() => 1));
        expect(sorted(streamed.map((event) => titleOf(event.data)))).toEqual(all);
        expect(new Set(streamed.map((event) => event.eventId)).size).toBe(all.length);
        expect(await listedTitles(agent, intentCode)).toEqual(all);
        expectCleanPosts(receiver);
        expectCleanPosts(refusing);
      },
    );
  },
);

// ---- SQLite: one serve process and an import process on the same file ---------------------------

describe("MCP Events between a doorbell serve process and an import process (SQLite)", {
  concurrent: true,
}, () => {
  const step = { concurrent: false, timeout: 45_000 };
  const email = "events.sqlite@example.sk";
  const model = "Kodiaq";
  const offers = [offer(model, "SQL-1"), offer(model, "SQL-2")];
  const store = new MemoryEventStore();
  let stage: Stage;
  let agent: Client;
  let intentCode: string;
  let receiver: AiSdkReceiver;
  let client: AiSdkClient;
  let subscriptionId: string;
  let resourceUpdates: string[];

  beforeAll(async () => {
    expect(sqlite.skipReason).toBeUndefined();
    const port = await freePort();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-events-sqlite-"));
    stage = newStage(
      dir,
      await startSmtp(),
      `http://127.0.0.1:${port}`,
      () => path.join(dir, "holder.sqlite"),
      { DOORBELL_SEAL_KEYS: `events2:${randomBytes(32).toString("base64")}` },
    );
    const process = serve(stage, "serve (SQLite)", port);
    receiver = await aiSdkReceiver(store);
    stage.servers.push(receiver.close);
    await process.waitFor("Ctrl+C stops", 80_000);
  }, 90_000);

  afterAll(() => closeStage(stage), 60_000);

  it(
    "publishes and confirms an intent; the person signs in by OAuth; the AI SDK subscribes by webhook",
    step,
    async () => {
      agent = await modernClient(`${stage.origin}/mcp`);
      stage.clients.push(() => agent.close());
      intentCode = await publishAndConfirm(stage, agent, model, email);
      const token = await signIn(stage, email);
      client = await aiSdkClient(`${stage.origin}/mcp`, token, store);
      stage.clients.push(() => client.close());
      const made = await subscribeByWebhook(client, intentCode, receiver);
      expect(made.truncated).toBe(false);
      subscriptionId = made.id;
      // A listener of the intent's push subscription hears only what the import tells the serve
      // process through the notifications table (subscriptions/listen has no interval check).
      const push = await pushSubscription(stage, agent, intentCode);
      resourceUpdates = await listenFor(stage, `${stage.origin}/mcp`, push.uri);
    },
  );

  it("an import process's matches reach the AI SDK's receiver once per eventId", step, async () => {
    await importOffers(stage, "import", offers);
    const titles = offers.map((o) => o.title).sort();
    await until("every match at the AI SDK's receiver", () => receiver.accepted.length >= titles.length);
    await until("the import's change at the listener", () => resourceUpdates.length > 0);
    expect(sorted(receiver.titles())).toEqual(titles);
    expect([...acceptedPerEventId(receiver).values()]).toEqual(titles.map(() => 1));
    expect(await listedTitles(agent, intentCode)).toEqual(titles);
    expect([...store.byKey.values()].map((s) => s.status)).toEqual(["active"]);
    expectCleanPosts(receiver);
  });

  it("a refresh is the same subscription", step, async () => {
    const refreshed = await client.experimental_events.refresh({ id: subscriptionId });
    expect(refreshed.id).toBe(subscriptionId);
  });
});
