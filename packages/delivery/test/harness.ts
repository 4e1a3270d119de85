import { once } from "node:events";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createSealer, type Database, generateKeyEntry, Keyring, migrate } from "@doorbell/store";
import { developmentPolicy, generateSecret } from "@doorbell/webhooks";
import { afterAll, beforeAll, beforeEach } from "vitest";
import type { CoalescedEvent } from "../src/index.js";
import {
  createDeliveryEngine,
  type DeliveryEngineOptions,
  type DeliveryTables,
  deliveryMigrations,
} from "../src/index.js";

export const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);
export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/** A clock the test moves by hand. */
export function fakeClock(start = T0) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms), set: (at: number) => (now = at) };
}

// One keyring for the whole test file: every engine on the shared database can open every secret.
const sealer = createSealer(new Keyring([generateKeyEntry()]));

/** The push profile's matches doorbell (§5.2), as the holder defines it for its engine. */
export const MATCHES_EVENT = "intent.matches.delivered";
export const matchesDoorbell: CoalescedEvent = {
  event: MATCHES_EVENT,
  count: "newMatches",
  latest: "latestDeliveredAt",
  body: (state) => ({
    subscriptionId: state.subscriberId,
    newMatches: state.count,
    latestDeliveredAt: state.latest,
  }),
};

/** An engine on an emptied delivery schema, so a test never processes another test's subscriptions. */
export async function engineOn(
  store: Database,
  clock: () => number,
  more: Partial<DeliveryEngineOptions> = {},
) {
  await migrate(store, [deliveryMigrations]);
  const typed = store as unknown as Database<DeliveryTables>;
  await typed.db.deleteFrom("delivery_outbox").execute();
  await typed.db.deleteFrom("delivery_subscriptions").execute();
  const engine = createDeliveryEngine({
    store: typed,
    sealer,
    policy: developmentPolicy({ timeoutMs: 2_000 }),
    clock,
    random: () => 0.5,
    coalesce: matchesDoorbell,
    ...more,
  });
  return { engine, db: typed.db, store: typed };
}

export interface Received {
  headers: IncomingMessage["headers"];
  body: string;
  json: { type?: string; data?: Record<string, unknown>; challenge?: string; [key: string]: unknown };
}

/**
 * A loopback endpoint that records every request and answers as told: challenges are echoed
 * unless `challenge` says otherwise; events get `status` (default 200) and optional headers.
 */
export async function startEndpoint() {
  const received: Received[] = [];
  const control = {
    status: 200,
    headers: {} as Record<string, string>,
    challenge: "echo" as "echo" | "wrong" | number,
    /** Statuses for the next event requests, used before `status`. */
    script: [] as number[],
    /** Statuses by MCP eventId, before `script` and `status`: one event refused, the others not. */
    byEventId: {} as Record<string, number>,
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const json = JSON.parse(body) as Received["json"];
      received.push({ headers: req.headers, body, json });
      const challenge = json.type === "verification" ? json.challenge : json.data?.challenge;
      if (typeof challenge === "string") {
        if (typeof control.challenge === "number") return res.writeHead(control.challenge).end();
        res.writeHead(200, { "content-type": "application/json" });
        return res.end(JSON.stringify({ challenge: control.challenge === "echo" ? challenge : "nope" }));
      }
      const byEventId = typeof json.eventId === "string" ? control.byEventId[json.eventId] : undefined;
      res.writeHead(byEventId ?? control.script.shift() ?? control.status, control.headers).end("{}");
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/doorbell`,
    received,
    control,
    /** Forgets what was received and answers as by default again. */
    reset() {
      received.length = 0;
      Object.assign(control, { status: 200, headers: {}, challenge: "echo", script: [], byEventId: {} });
    },
    events: () => received.filter((r) => !isChallenge(r)),
    challenges: () => received.filter(isChallenge),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export type Endpoint = Awaited<ReturnType<typeof startEndpoint>>;

/**
 * One endpoint for a suite: started before it, reset before each test, closed after it. The
 * returned object reads through to the running endpoint.
 */
export function endpointForSuite(): Pick<Endpoint, "url" | "received" | "control" | "events" | "challenges"> {
  let started: Endpoint | undefined;
  beforeAll(async () => {
    started = await startEndpoint();
  });
  beforeEach(() => started?.reset());
  afterAll(() => started?.close());
  const current = (): Endpoint => {
    if (!started) throw new Error("the endpoint exists only inside tests and hooks");
    return started;
  };
  return {
    get url() {
      return current().url;
    },
    get received() {
      return current().received;
    },
    get control() {
      return current().control;
    },
    events: () => current().events(),
    challenges: () => current().challenges(),
  };
}

const isChallenge = (r: Received) =>
  r.json.type === "subscription.verification" || r.json.type === "verification";

export const newSecret = () => generateSecret();

/** Moves the fake clock to the subscription's next wake-up and processes what is due then. */
export async function runAtNextWake(
  engine: { runDue(): Promise<number> },
  db: import("@doorbell/store").Kysely<DeliveryTables>,
  clock: { set(at: number): number; now(): number },
  id: string,
): Promise<number | null> {
  const row = await db
    .selectFrom("delivery_subscriptions")
    .select("wake_at")
    .where("id", "=", id)
    .executeTakeFirst();
  const wake = row?.wake_at ?? null;
  if (wake === null) return null;
  clock.set(Math.max(clock.now(), wake));
  await engine.runDue();
  return wake;
}

/** A subscription that has passed its challenge and is active (approval not required). */
export async function activeSubscription(
  engine: import("../src/index.js").DeliveryEngine,
  db: import("@doorbell/store").Kysely<DeliveryTables>,
  clock: { now(): number },
  url: string,
  more: Partial<import("../src/index.js").SubscribeInput> = {},
) {
  const secret = more.secret ?? newSecret();
  const sub = await engine.subscribe(db, {
    channel: "push",
    url,
    secret,
    expiresAt: clock.now() + 30 * DAY,
    refreshBefore: clock.now() + 27 * DAY,
    requiresApproval: false,
    ...more,
  });
  await engine.runDue();
  return { ...sub, secret };
}

/** `count` active push subscriptions to `url`, made one after another. */
export async function activeSubscriptions(
  engine: import("../src/index.js").DeliveryEngine,
  db: import("@doorbell/store").Kysely<DeliveryTables>,
  clock: { now(): number },
  url: string,
  count: number,
) {
  const subs: Awaited<ReturnType<typeof activeSubscription>>[] = [];
  for (let i = 0; i < count; i++) subs.push(await activeSubscription(engine, db, clock, url));
  return subs;
}

/** Subscriptions the engine's workers put back for their host's cap so far (fair delivery). */
export async function hostDeferrals(engine: import("../src/index.js").DeliveryEngine): Promise<number> {
  const metric = await engine.metrics.registry
    .getSingleMetric("doorbell_delivery_host_busy_deferrals_total")
    ?.get();
  return metric?.values[0]?.value ?? 0;
}

/** Waits until `endpoint` has received `count` events, or 20 s have passed. */
export async function untilReceived(endpoint: Pick<Endpoint, "events">, count: number): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (endpoint.events().length < count && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 10));
}

/**
 * An engine with one active subscription on an MCP Events channel, and `send(n)`, which enqueues
 * `evt_<n>` with cursor `c<n>` and data `{n}`.
 */
export async function eventsSubscription(
  store: Database,
  url: string,
  channel: "mcp" | "mcp-standard",
  more: Partial<DeliveryEngineOptions> = {},
) {
  const clock = fakeClock();
  const engine = await engineOn(store, clock.now, more);
  const sub = await activeSubscription(engine.engine, engine.db, clock, url, {
    channel,
    subscriberId: "5d1e0b7c-3a4f-4e21-9c8b-7f6a5e4d3c2b",
  });
  const send = (n: number) =>
    engine.store.transaction((trx) =>
      engine.engine.enqueue(trx, sub.id, {
        type: "incident.created",
        eventId: `evt_${n}`,
        cursor: `c${n}`,
        data: { n },
      }),
    );
  /** Rows still in the subscription's queue. */
  const queued = async () =>
    (
      await engine.db
        .selectFrom("delivery_outbox")
        .select("seq")
        .where("subscription_id", "=", sub.id)
        .execute()
    ).length;
  return { ...engine, clock, sub, send, queued };
}

/** When an attempt was signed, in epoch ms (both MCP wires carry the second). */
export const signedAt = (received: Received): number =>
  1000 * Number(received.headers["webhook-timestamp"] ?? received.headers["x-mcp-timestamp"]);
