/**
 * Issue 3, the crash test: worker processes delivering a storm of events to a loopback receiver
 * are killed with SIGKILL at random moments and restarted; in the end the receiver has every
 * event, each subscription's events arrived in order, and every duplicate carried the webhook-id
 * of the first delivery. SQLite with one worker; PostgreSQL with one worker, and with two worker
 * processes of which one is killed again and again while the other keeps running.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomInt } from "node:crypto";
import { once } from "node:events";
import fs from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import {
  createSealer,
  type Database,
  formatKeyring,
  generateKeyEntry,
  Keyring,
  migrate,
  SEAL_KEYS_ENV,
} from "@doorbell/store";
import { type EngineFixture, forEachEngine } from "@doorbell/store/testing";
import {
  createStandardVerifier,
  developmentPolicy,
  generateSecret,
  type StandardVerifier,
} from "@doorbell/webhooks";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createDeliveryEngine, type DeliveryTables, deliveryMigrations } from "../src/index.js";
import { bundleScript } from "./fixtures/bundle-script.js";

const SUBSCRIPTIONS = 100;
const EVENTS_PER_SUBSCRIPTION = 100;
/** Enqueued before the first worker starts; the rest is enqueued while workers are being killed. */
const EVENTS_BEFORE_START = 50;
/**
 * At least this many kills; the loop aims for MIN_KILLS_MID_WORK of them in the middle of delivering
 * events, and at least MIN_KILLS_MID_WORK_REQUIRED must be (fast deliveries make a kill that lands
 * while a lease is held a matter of luck, up to MAX_KILLS).
 */
const MIN_KILLS = 12;
const MIN_KILLS_MID_WORK = 10;
const MIN_KILLS_MID_WORK_REQUIRED = 3;
const MAX_KILLS = 30;
const KILL_DELAY_MS = [50, 400] as const;
/**
 * The worker only starts an attempt while `timeoutMs + 5 s` of its lease is left (worker.ts,
 * drainQueue), so a lease must be longer than that: 7 s with a 1 s egress timeout is the shortest
 * useful one. A killed worker's subscriptions wait that long before another worker takes them.
 */
const WORKER_ENV = {
  CRASH_LEASE_MS: "7000",
  CRASH_TIMEOUT_MS: "1000",
  CRASH_CONCURRENCY: "8",
  CRASH_POLL_MS: "100",
  CRASH_MAX_PER_CLAIM: "20",
};
const FINISH_TIMEOUT_MS = 90_000;
// Generous: on two loaded cores the PostgreSQL variants take over three minutes; a stuck drain still
// fails on FINISH_TIMEOUT_MS with a report of what is missing.
const TEST_TIMEOUT_MS = 480_000;
const EVENT_TYPE = "intent.status.changed";

const repoRoot = fileURLToPath(new URL("../../..", import.meta.url));
const workerSource = fileURLToPath(new URL("./fixtures/crash-worker.ts", import.meta.url));
/** The worker's bundle (fixtures/bundle-script.ts): the same sources, started without a loader. */
let workerScript: string;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

interface Receipt {
  n: number;
  webhookId: string;
}

interface Endpoint {
  secret: string;
  verifier: StandardVerifier;
  subscriptionId?: string;
  receipts: Receipt[];
  seen: Set<number>;
}

/** A loopback receiver that verifies every request with its subscription's secret and records it. */
async function startReceiver(count: number) {
  const endpoints: Endpoint[] = Array.from({ length: count }, () => {
    const secret = generateSecret();
    return { secret, verifier: createStandardVerifier({ secrets: [secret] }), receipts: [], seen: new Set() };
  });
  const stats = { requests: 0, challenges: 0, events: 0, distinct: 0 };
  const failures: string[] = [];
  const fail = (message: string) => {
    if (failures.length < 50) failures.push(message);
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    // A killed worker leaves half-sent requests behind: those are not deliveries.
    req.on("error", () => {});
    res.on("error", () => {});
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      stats.requests++;
      const body = Buffer.concat(chunks);
      const index = Number(/^\/hooks\/(\d+)$/.exec(req.url ?? "")?.[1] ?? Number.NaN);
      const endpoint = endpoints[index];
      if (endpoint === undefined) {
        fail(`a request to an unknown path ${req.url}`);
        return res.writeHead(404).end();
      }
      let webhookId: string;
      try {
        webhookId = endpoint.verifier.verify(req.headers as Record<string, string>, body).id;
      } catch (error) {
        fail(`endpoint ${index}: signature refused: ${(error as Error).message}`);
        return res.writeHead(401).end();
      }
      let json: { type?: string; data?: Record<string, unknown> };
      try {
        json = JSON.parse(body.toString("utf8"));
      } catch {
        fail(`endpoint ${index}: a body that is not JSON`);
        return res.writeHead(400).end();
      }
      if (json.type === "subscription.verification") {
        stats.challenges++;
        res.writeHead(200, { "content-type": "application/json" });
        return res.end(JSON.stringify({ challenge: json.data?.challenge }));
      }
      const n = json.data?.n;
      if (json.type !== EVENT_TYPE || typeof n !== "number") {
        fail(`endpoint ${index}: unexpected body of type ${json.type}`);
      } else if (json.data?.subscription !== endpoint.subscriptionId) {
        fail(`endpoint ${index}: event ${n} of another subscription arrived here`);
      } else {
        stats.events++;
        endpoint.receipts.push({ n, webhookId });
        if (!endpoint.seen.has(n)) {
          endpoint.seen.add(n);
          stats.distinct++;
        }
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  server.on("clientError", (_error, socket) => socket.destroy());
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    endpoints,
    stats,
    failures,
    url: (index: number) => `http://127.0.0.1:${port}/hooks/${index}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

type Receiver = Awaited<ReturnType<typeof startReceiver>>;

interface WorkerProcess {
  readonly id: string;
  readonly child: ChildProcess;
  readonly ready: Promise<void>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Warnings and errors the worker logged, and anything else it wrote to stderr. */
  stderr(): string;
}

const live = new Set<ChildProcess>();

function startWorker(dbUrl: string, sealKeys: string, workerId: string): WorkerProcess {
  const child = spawn(process.execPath, [workerScript], {
    cwd: repoRoot,
    env: {
      ...process.env,
      ...WORKER_ENV,
      CRASH_DB_URL: dbUrl,
      CRASH_WORKER_ID: workerId,
      [SEAL_KEYS_ENV]: sealKeys,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  live.add(child);
  let out = "";
  let err = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    out += chunk.toString("utf8");
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    err += chunk.toString("utf8");
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on("exit", (code, signal) => {
      live.delete(child);
      resolve({ code, signal });
    });
  });
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the worker was not ready after 30 s: ${err}`)), 30_000);
    child.stdout?.on("data", () => {
      if (out.includes("ready\n")) {
        clearTimeout(timer);
        resolve();
      }
    });
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`the worker exited before it was ready (${code ?? signal}): ${err}`));
    });
  });
  ready.catch(() => {});
  return { id: workerId, child, ready, exited, stderr: () => err };
}

async function killHard(worker: WorkerProcess): Promise<void> {
  worker.child.kill("SIGKILL");
  const { signal } = await worker.exited;
  expect(signal, `the worker died on its own before the kill: ${worker.stderr()}`).toBe("SIGKILL");
}

async function stopGracefully(worker: WorkerProcess): Promise<void> {
  worker.child.kill("SIGTERM");
  const { code } = await worker.exited;
  expect(code, worker.stderr()).toBe(0);
}

function logLines(workers: WorkerProcess[]): { level?: number; msg?: string; raw: string }[] {
  return workers
    .flatMap((worker) => worker.stderr().split("\n"))
    .filter((line) => line.trim() !== "")
    .map((raw) => {
      try {
        return { ...(JSON.parse(raw) as { level?: number; msg?: string }), raw };
      } catch {
        return { raw };
      }
    });
}

/** Lines the workers logged at error level, or wrote outside the log: there should be none, even across kills. */
function loggedErrors(workers: WorkerProcess[]): string[] {
  return logLines(workers)
    .filter((line) => (line.level ?? 50) >= 50)
    .map((line) => line.raw);
}

/** Attempts that failed (a timeout, a refused connection): each may legitimately be sent again. */
function failedAttempts(workers: WorkerProcess[]): number {
  return logLines(workers).filter((line) => line.msg === "delivery attempt failed").length;
}

async function outboxDepth(store: Database<DeliveryTables>): Promise<number> {
  const row = await store.db
    .selectFrom("delivery_outbox")
    .select((eb) => eb.fn.countAll<number>().as("depth"))
    .executeTakeFirstOrThrow();
  return Number(row.depth);
}

/**
 * Verified subscriptions a worker holds a live lease on: it is in the middle of delivering their
 * events (a worker holds a lease only while it processes the subscription).
 */
async function deliveriesHeld(store: Database<DeliveryTables>, workerId: string): Promise<number> {
  const row = await store.db
    .selectFrom("delivery_subscriptions")
    .select((eb) => eb.fn.countAll<number>().as("held"))
    .where("lease_owner", "=", workerId)
    .where("lease_until", ">", Date.now())
    .where("status", "=", "active")
    .executeTakeFirstOrThrow();
  return Number(row.held);
}

async function stuckReport(store: Database<DeliveryTables>, receiver: Receiver): Promise<string> {
  const missing = receiver.endpoints
    .map((endpoint, index) => ({ index, missing: EVENTS_PER_SUBSCRIPTION - endpoint.seen.size }))
    .filter((entry) => entry.missing > 0);
  const subs = await store.db
    .selectFrom("delivery_subscriptions")
    .select(["id", "status", "verified", "wake_at", "lease_owner", "lease_until", "last_error"])
    .execute();
  const now = Date.now();
  const interesting = subs
    .filter((sub) => sub.status !== "active" || (sub.lease_until !== null && sub.lease_until > now))
    .slice(0, 10);
  return JSON.stringify({
    now,
    outbox: await outboxDepth(store),
    missingEvents: missing.slice(0, 10),
    subscriptionsMissingEvents: missing.length,
    subscriptions: interesting,
  });
}

/** Enqueues events `from`..`to - 1` for every subscription, one transaction per event number. */
async function enqueueRange(
  store: Database<DeliveryTables>,
  engine: ReturnType<typeof createDeliveryEngine>,
  subscriptionIds: string[],
  from: number,
  to: number,
  pauseMs = 0,
): Promise<void> {
  for (let n = from; n < to; n++) {
    await store.transaction(async (trx) => {
      for (const id of subscriptionIds) {
        await engine.enqueue(trx, id, { type: EVENT_TYPE, data: { subscription: id, n } });
      }
    });
    if (pauseMs > 0) await sleep(pauseMs);
  }
}

interface Variant {
  label: string;
  /** A second worker process that is never killed. */
  survivor: boolean;
}

async function crashRun(fixture: EngineFixture, variant: Variant): Promise<void> {
  const started = Date.now();
  const database = await fixture.createDatabase();
  const store = database.db as unknown as Database<DeliveryTables>;
  await migrate(store, [deliveryMigrations]);
  const key = generateKeyEntry();
  const sealKeys = formatKeyring([key]);
  const engine = createDeliveryEngine({
    store,
    sealer: createSealer(new Keyring([key])),
    policy: developmentPolicy({ timeoutMs: 1_000 }),
  });
  const receiver = await startReceiver(SUBSCRIPTIONS);
  const workers: WorkerProcess[] = [];
  try {
    const ids: string[] = [];
    for (const [index, endpoint] of receiver.endpoints.entries()) {
      const sub = await engine.subscribe(store.db, {
        channel: "push",
        url: receiver.url(index),
        secret: endpoint.secret,
        expiresAt: Date.now() + 24 * 60 * 60 * 1000,
        refreshBefore: Date.now() + 12 * 60 * 60 * 1000,
        requiresApproval: false,
      });
      endpoint.subscriptionId = sub.id;
      ids.push(sub.id);
    }
    await enqueueRange(store, engine, ids, 0, EVENTS_BEFORE_START);

    const spawnWorker = async () => {
      const worker = startWorker(database.url, sealKeys, `crash_${workers.length}`);
      workers.push(worker);
      await worker.ready;
      return worker;
    };
    const storming = Date.now();
    const survivor = variant.survivor ? await spawnWorker() : undefined;
    // The second half of the storm arrives while workers are being killed.
    const producer = enqueueRange(store, engine, ids, EVENTS_BEFORE_START, EVENTS_PER_SUBSCRIPTION, 100);
    producer.catch(() => {});

    // Kill at a random moment after each start; go on until enough kills caught a worker mid-work.
    let kills = 0;
    let killsMidWork = 0;
    let killsWhileReceiving = 0;
    while ((kills < MIN_KILLS || killsMidWork < MIN_KILLS_MID_WORK) && kills < MAX_KILLS) {
      const victim = await spawnWorker();
      const before = receiver.stats.events;
      await sleep(randomInt(KILL_DELAY_MS[0], KILL_DELAY_MS[1] + 1));
      const held = await deliveriesHeld(store, victim.id);
      if (receiver.stats.events > before) killsWhileReceiving++;
      await killHard(victim);
      kills++;
      if (held > 0) killsMidWork++;
    }
    await producer;
    const draining = Date.now();
    const last = await spawnWorker();

    const total = SUBSCRIPTIONS * EVENTS_PER_SUBSCRIPTION;
    const deadline = Date.now() + FINISH_TIMEOUT_MS;
    let depth = await outboxDepth(store);
    while (receiver.stats.distinct < total || depth > 0) {
      // A row leaves the outbox only after its endpoint answered, and the receiver records a
      // request before it answers: an empty outbox with events missing means they were lost.
      if (depth === 0) {
        throw new Error(
          `${variant.label}: the outbox is empty but ${total - receiver.stats.distinct} events never arrived; ${await stuckReport(store, receiver)}`,
        );
      }
      if (Date.now() > deadline) {
        throw new Error(
          `${variant.label}: not everything was delivered within ${FINISH_TIMEOUT_MS / 1000} s after the last restart: ${receiver.stats.distinct}/${total} received; ${await stuckReport(store, receiver)}; receiver failures: ${JSON.stringify(receiver.failures.slice(0, 5))}; worker errors: ${JSON.stringify(loggedErrors(workers).slice(0, 5))}`,
        );
      }
      await sleep(100);
      depth = await outboxDepth(store);
    }
    const drained = Date.now();
    await stopGracefully(last);
    if (survivor) {
      expect(survivor.child.exitCode, "the surviving worker kept running").toBeNull();
      await stopGracefully(survivor);
    }

    // Every request was signed with its subscription's secret and carried that subscription's data.
    expect(receiver.failures).toEqual([]);
    let duplicates = 0;
    const owners = new Map<string, string>();
    for (const [index, endpoint] of receiver.endpoints.entries()) {
      const firstIds = new Map<number, string>();
      const firsts: number[] = [];
      let highest = -1;
      for (const { n, webhookId } of endpoint.receipts) {
        const first = firstIds.get(n);
        if (first === undefined) {
          firstIds.set(n, webhookId);
          firsts.push(n);
          highest = Math.max(highest, n);
          // Distinct events never share a webhook-id.
          const owner = `${index}:${n}`;
          expect(owners.get(webhookId) ?? owner, `webhook-id ${webhookId} reused`).toBe(owner);
          owners.set(webhookId, owner);
          continue;
        }
        duplicates++;
        expect(webhookId, `endpoint ${index}: a duplicate of event ${n} with another webhook-id`).toBe(first);
        // A redelivery comes before anything later of its subscription: nothing is ever sent out of order.
        expect(n, `endpoint ${index}: event ${n} arrived again after event ${highest}`).toBe(highest);
      }
      // Every event arrived, and in enqueue order.
      expect(firsts, `endpoint ${index}: first receipts out of order or missing`).toEqual(
        Array.from({ length: EVENTS_PER_SUBSCRIPTION }, (_, n) => n),
      );
    }
    expect(receiver.stats.distinct).toBe(total);
    // A kill can make the next worker send again only what the victim had in flight: one request
    // per subscription it held. Any other duplicate needs a failed attempt (a timeout) to explain it.
    const retries = failedAttempts(workers);
    const concurrency = Number(WORKER_ENV.CRASH_CONCURRENCY);
    expect(duplicates, "more duplicates than kills and failed attempts explain").toBeLessThanOrEqual(
      kills * concurrency + retries,
    );
    expect(receiver.stats.events).toBe(total + duplicates);
    const notActive = await store.db
      .selectFrom("delivery_subscriptions")
      .select("id")
      .where("status", "!=", "active")
      .execute();
    expect(notActive).toEqual([]);
    expect(loggedErrors(workers)).toEqual([]);
    expect(kills).toBeGreaterThanOrEqual(MIN_KILLS);
    expect(killsMidWork, "kills that caught the worker delivering").toBeGreaterThanOrEqual(
      MIN_KILLS_MID_WORK_REQUIRED,
    );

    const seconds = (from: number, to = Date.now()) => `${((to - from) / 1000).toFixed(1)}s`;
    console.log(
      `[crash-sigkill] ${variant.label}: events=${total} subscriptions=${SUBSCRIPTIONS} ` +
        `kills=${kills} (mid-delivery: ${killsMidWork}, events arriving: ${killsWhileReceiving}) ` +
        `restarts=${kills} processes=${workers.length} receipts=${receiver.stats.events} ` +
        `duplicates=${duplicates} failedAttempts=${retries} challenges=${receiver.stats.challenges} ` +
        `time=${seconds(started)} (setup ${seconds(started, storming)}, kills ${seconds(storming, draining)}, ` +
        `drain ${seconds(draining, drained)})`,
    );
  } finally {
    for (const worker of workers) worker.child.kill("SIGKILL");
    await Promise.all(workers.map((worker) => worker.exited));
    await receiver.close();
  }
}

beforeAll(async () => {
  workerScript = await bundleScript(workerSource);
});
afterAll(() => fs.rmSync(workerScript, { force: true }));

afterEach(() => {
  for (const child of live) child.kill("SIGKILL");
});

forEachEngine({ describe, beforeAll, afterAll }, (fixture) => {
  it(
    `one worker process killed with SIGKILL ${MIN_KILLS}+ times: every event arrives, in order, duplicates keep their webhook-id`,
    () => crashRun(fixture, { label: `${fixture.dialect}, one worker`, survivor: false }),
    TEST_TIMEOUT_MS,
  );

  if (fixture.dialect === "postgres") {
    it(
      `two worker processes, one killed with SIGKILL ${MIN_KILLS}+ times while the other runs: the same guarantees`,
      () => crashRun(fixture, { label: "postgres, two workers", survivor: true }),
      TEST_TIMEOUT_MS,
    );
  }
});
