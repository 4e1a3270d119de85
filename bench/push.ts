import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { Worker } from "node:worker_threads";
import {
  createDeliveryEngine,
  type DeliveryEngine,
  type DeliveryTables,
  deliveryMigrations,
} from "@doorbell/delivery";
import {
  type CatalogueOfferInput,
  createHolderApp,
  createHolderServices,
  createLocalMailbox,
  createMcpHandler,
  defaultConfig,
  type HolderContext,
  type HolderServices,
  type HolderTables,
  holderMigrations,
  type PushService,
  pushMigrations,
} from "@doorbell/holder";
import {
  createCodeHasher,
  createSealer,
  type Database,
  generateKeyEntry,
  Keyring,
  migrate,
} from "@doorbell/store";
import { type TestEngine, testEngines } from "@doorbell/store/testing";
import { closeEgress, developmentPolicy, generateSecret } from "@doorbell/webhooks";
import { type ServerType, serve } from "@hono/node-server";
import { pino } from "pino";
import {
  type AgentCommand,
  type AgentData,
  type AgentReport,
  type AgentStats,
  clockMs,
} from "./push-agent.js";

// Push profile 0.4 end to end: with 1,000 active intents, each with one approved push subscription,
// the time from an offer entering the holder (the start of importCatalogue) to the agent having
// read the match (its intent_list_matches answer containing that offer has arrived), with
// coalescing off; beside the same agent polling intent_list_matches once per 15 minutes per intent
// (§8.2), whose wait is computed from the interval with random phases and whose round trip is
// measured in the same run.
//
// Real parts: the holder's services, MCP handler and pages (createHolderApp on @hono/node-server,
// 127.0.0.1), a delivery engine (coalescing "off", developmentPolicy(), a started worker), the
// agent's endpoint with the real @doorbell/webhooks receiver and the SDK's MCP Client, both in a
// worker thread (bench/push-agent.ts). Setup goes through the services as the person and the agent
// would (publish, giveConsent, confirmEmail from the local mailbox, subscribe, the challenge,
// approveByToken from the mailed link) and is not measured.

/** Active intents, each with one subscription: 1,000 unless BENCH_PUSH_INTENTS says (e.g. 10000). */
const INTENTS = intentsToRun(process.env.BENCH_PUSH_INTENTS);
const OFFERS = 1_000;
const RATE = 20;
const WARMUP_OFFERS = 40;
const SESSIONS = 4;
const SETUP_CONCURRENCY = 8;
const ROUND_TRIPS = 200;
const POLL_INTERVAL_MS = 15 * 60_000;
const SIMULATED_OFFERS = 200_000;
/** How long setup waits for challenges and mails: longer for more intents. */
const RUN_TIMEOUT_MS = Math.max(60_000, INTENTS * 20);
const MB = 1024 * 1024;

export async function benchPush(): Promise<void> {
  const pgUrl = (process.env.DOORBELL_BENCH_PG_URL ?? process.env.DOORBELL_TEST_PG_URL)?.trim();
  const [sqlite, postgres] = testEngines({
    env: { DOORBELL_TEST_PG_URL: pgUrl ?? "" },
    log: () => {},
  }) as [TestEngine, TestEngine];
  console.log(
    `Node ${process.version}; ${INTENTS.toLocaleString("en-US")} active intents, each with one approved push ` +
      `subscription; delivery engine with coalescing "off" and one worker (concurrency 16); the agent ` +
      `(receiver + ${SESSIONS} MCP sessions) in a worker thread; ${OFFERS.toLocaleString("en-US")} offers at ` +
      `${RATE}/s, one importCatalogue call each, each matching exactly one intent (after ${WARMUP_OFFERS} ` +
      "unmeasured warm-up offers). MCP tool rate limit off (all calls come from one loopback address).",
  );
  await benchVariant("SQLite (WAL, synchronous=FULL, temp file)", sqlite);
  if (pgUrl) await benchVariant("PostgreSQL", postgres);
  else console.log("\nPostgreSQL skipped: set DOORBELL_BENCH_PG_URL or DOORBELL_TEST_PG_URL to run it.");
}

interface Bench {
  ctx: HolderContext;
  services: HolderServices;
  push: PushService;
  engine: DeliveryEngine;
}

async function benchVariant(title: string, testEngine: TestEngine): Promise<void> {
  const setupStart = clockMs();
  const created = await testEngine.createDatabase();
  const store = created.db;
  await migrate(store, [holderMigrations, deliveryMigrations, pushMigrations]);
  const keyring = new Keyring([generateKeyEntry()]);
  const sealer = createSealer(keyring);
  const log = pino({ level: "silent" });
  const holderStore = store as unknown as Database<HolderTables>;
  const mailbox = createLocalMailbox({ store: holderStore, sealer, clock: Date.now });
  const publicUrl = "http://127.0.0.1";
  const ctx: HolderContext = {
    store: holderStore,
    sealer,
    codes: createCodeHasher(keyring, "holder.codes"),
    contacts: createCodeHasher(keyring, "holder.contacts"),
    mailer: mailbox,
    config: defaultConfig(publicUrl),
    clock: Date.now,
    log,
  };
  const policy = developmentPolicy();
  const engine = createDeliveryEngine({
    store: store as unknown as Database<DeliveryTables>,
    sealer,
    policy,
    coalescing: "off",
    logger: log,
  });
  const services = createHolderServices(ctx, { push: { engine } });
  const push = services.push as PushService;
  await services.matching.start();
  const mcp = createMcpHandler(
    {
      intents: services.intents,
      matches: services.matching,
      offers: services.offers,
      demand: services.demand,
      push,
    },
    { publicUrl, log, toolRateLimit: false },
  );
  const app = createHolderApp({
    config: ctx.config,
    services: {
      intents: services.intents,
      consent: services.consent,
      matches: services.matching,
      demand: services.demand,
      push,
    },
    mcp,
    mailbox,
    languages: ["sk", "cs", "en"],
    log,
  });
  const server: ServerType = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" });
  await once(server, "listening");
  const mcpUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  const worker = engine.worker({ concurrency: 16 });
  worker.start();
  let agent: Agent | undefined;
  const rss = rssSampler();
  try {
    const bench: Bench = { ctx, services, push, engine };
    const intents = await inParallel(INTENTS, (i) => activeIntent(bench, i));
    agent = await startAgent({
      mcpUrl,
      intents: intents.map((intent) => ({ code: intent.code, secret: generateSecret() })),
      sessions: SESSIONS,
    });
    const subscriptionIds = await subscribeAll(bench, agent, intents);
    const setupSeconds = (clockMs() - setupStart) / 1000;

    // Warm-up, then the measured run; offer k matches intent targets[k] only.
    const random = seededRandom(20261130);
    const pick = () => Math.floor(random() * INTENTS);
    await feed(bench, agent, WARMUP_OFFERS, 0, pick);
    const targets: number[] = [];
    rss.reset();
    const started = clockMs();
    const { latencies, importMs } = await feed(bench, agent, OFFERS, WARMUP_OFFERS, () => {
      const target = pick();
      targets.push(target);
      return target;
    });
    const runSeconds = (clockMs() - started) / 1000;
    const peakRss = rss.peak();
    const stats = await agent.stats();

    // The baseline's round trip, measured on the intent of the last offer: since = the match before
    // its newest answers that one match; since = the newest answers none.
    const measured = targets.at(-1) as number;
    const { matches } = await services.matching.listMatches(
      { kind: "intent-code", intentId: intents[measured]?.id as string },
      undefined,
      undefined,
    );
    const newest = matches.at(-1)?.deliveredAt as string;
    const roundTrips = await agent.roundTrips({
      intent: measured,
      sinceEmpty: newest,
      sinceOne: matches.at(-2)?.deliveredAt ?? new Date(Date.parse(newest) - 1).toISOString(),
      n: ROUND_TRIPS,
    });
    const polled = simulatePolling(roundTrips.one);

    console.log(`\n${title}`);
    console.log(
      `  setup (not measured): ${INTENTS.toLocaleString("en-US")} intents published, confirmed, subscribed, ` +
        `challenged and approved in ${setupSeconds.toFixed(1)} s; ${subscriptionIds.length} subscriptions active`,
    );
    console.log(
      `\n  Offer entering the holder → the agent has read the match, ms (count ${latencies.length})`,
    );
    const pushed = summary(latencies);
    const poll = summary(polled);
    const row = (name: string, s: Summary) =>
      console.log(
        `    ${name.padEnd(54)} p50 ${fmt(s.p50).padStart(9)}  p99 ${fmt(s.p99).padStart(9)}  max ${fmt(s.max).padStart(9)}`,
      );
    row("push: doorbell, then intent_list_matches with since", pushed);
    row("polling every 15 min per intent (wait computed)", poll);
    console.log(
      `    polling / push:${" ".repeat(40)} p50 ${ratio(poll.p50 / pushed.p50).padStart(9)}  p99 ${ratio(poll.p99 / pushed.p99).padStart(9)}`,
    );
    row("of push: the importCatalogue call itself", summary(importMs));
    console.log(
      `  The polling row: for ${SIMULATED_OFFERS.toLocaleString("en-US")} simulated offers, a wait uniform over ` +
        "0–15 min (each intent's poll phase random, seeded) plus a one-match round trip drawn from the " +
        `${ROUND_TRIPS} measured below; the wait is computed, the round trip measured.`,
    );
    console.log(
      `  intent_list_matches round trip, measured (${ROUND_TRIPS} sequential reads each, after the run):` +
        `\n    empty (since = newest)  ${percentiles(roundTrips.empty)}` +
        `\n    one match               ${percentiles(roundTrips.one)}`,
    );
    console.log("\n  Cost");
    const perDayPolling = (24 * 60 * 60 * 1000) / POLL_INTERVAL_MS;
    console.log(
      `    polling: ${perDayPolling} intent_list_matches calls per intent per day whether anything arrived or not: ` +
        `${fmtInt(perDayPolling * INTENTS)} a day for ${fmtInt(INTENTS)} intents ` +
        `(${((perDayPolling * INTENTS) / 86_400).toFixed(1)} a second).`,
    );
    console.log(
      `    push, this run: ${fmtInt(stats.doorbells)} doorbells and ${fmtInt(stats.reads)} reads ` +
        `(${fmtInt(stats.emptyReads)} empty, ${fmtInt(stats.readErrors)} failed) for ${fmtInt(OFFERS + WARMUP_OFFERS)} ` +
        "matches: one doorbell and one read per match with coalescing off, nothing while nothing arrives; " +
        "with the profile's coalescing at most 24 of each per intent per day.",
    );
    console.log(
      `  offers fed at ${(OFFERS / runSeconds).toFixed(1)}/s (goal ${RATE}/s); RSS ${peakRss} MB at most while ` +
        `feeding, ${Math.round(process.memoryUsage().rss / MB)} MB at the end (holder, engine and agent thread: one process)`,
    );
  } finally {
    rss.stop();
    await agent?.close();
    await worker.stop();
    await mcp.close();
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      (server as { closeAllConnections?: () => void }).closeAllConnections?.();
    });
    await closeEgress(policy);
    await testEngine.cleanup();
  }
}

interface ActiveIntent {
  id: string;
  code: string;
  email: string;
}

/** What an assistant publishes for a person, and the person's consent and double opt-in. */
async function activeIntent({ services, ctx }: Bench, i: number): Promise<ActiveIntent> {
  const published = await services.intents.publish({
    statement: `A Benchmark ${modelOf(i)}, any year, anywhere in Slovakia`,
    criteria: { category: "vehicles", make: "Benchmark", model: modelOf(i) },
    area: { country: "SK" },
    budget: { amount: 30_000, currency: "EUR" },
  });
  const email = `buyer-${i}@example.sk`;
  const consentToken = published.consentUrl.slice(published.consentUrl.lastIndexOf("/") + 1);
  await services.consent.giveConsent(consentToken, { email, accepted: true });
  const confirm = await mailLink(ctx, email, /\/confirm\/([0-9A-Za-z]+)/);
  await services.consent.confirmEmail(confirm);
  return { id: published.intent.id, code: published.intentCode, email };
}

/** Subscribes every intent to its own path of the agent's endpoint, waits for the challenges, approves. */
async function subscribeAll(bench: Bench, agent: Agent, intents: readonly ActiveIntent[]): Promise<string[]> {
  // The approval link is read as soon as it is mailed: the local mailbox finds a recipient's mail
  // among its newest 1,000 only (recipients are sealed), and at 10,000 intents it holds 20,000.
  const links: string[] = [];
  const ids = await inParallel(intents.length, async (i) => {
    const intent = intents[i] as ActiveIntent;
    const view = await bench.push.subscribe(
      { kind: "intent-code", intentId: intent.id },
      { delivery: { url: `${agent.url}/hooks/${i}`, secret: agent.secrets[i] as string } },
    );
    links[i] = await mailLink(bench.ctx, intent.email, /\/notifications\/([0-9A-Za-z]+)/);
    return view.subscriptionId;
  });
  agent.send({ kind: "subscriptions", ids });
  const db = bench.ctx.store.db as unknown as Parameters<DeliveryEngine["get"]>[0];
  const deadline = Date.now() + RUN_TIMEOUT_MS;
  for (const id of ids) {
    for (;;) {
      const view = await bench.engine.get(db, id);
      if (view.status === "awaiting_approval") break;
      if (view.status !== "pending_verification" || Date.now() > deadline)
        throw new Error(`a subscription is ${view.status}, not awaiting approval`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  // The person allows each from the link mailed to the verified address (§6 rule 3).
  await inParallel(intents.length, (i) => bench.push.approveByToken(links[i] as string));
  for (const id of ids) {
    const view = await bench.engine.get(db, id);
    if (view.status !== "active") throw new Error(`a subscription is ${view.status}, not active`);
  }
  return ids;
}

/** The link's token from the newest mails to `to`, waiting for the mail (it is sent after a commit). */
async function mailLink(ctx: HolderContext, to: string, link: RegExp): Promise<string> {
  const mailer = ctx.mailer as ReturnType<typeof createLocalMailbox>;
  const deadline = Date.now() + RUN_TIMEOUT_MS;
  do {
    for (const mail of await mailer.listMailbox({ to, limit: 20 })) {
      const token = link.exec(mail.text)?.[1];
      if (token !== undefined) return token;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  } while (Date.now() < deadline);
  throw new Error(`no mail to ${to} with ${link}`);
}

const modelOf = (i: number) => `M${String(i).padStart(4, "0")}`;

function offerFor(k: number, target: number): CatalogueOfferInput {
  return {
    source: { kind: "catalogue", ref: `bench-push-${k}`, seller: "Autobazár Senec" },
    title: `Benchmark ${modelOf(target)} 2.0 TDI #${k}`,
    description: "Well kept, full service history.",
    category: "vehicles",
    price: { amount: 13_900, currency: "EUR" },
    location: { country: "SK", region: "SK-BL" },
    url: `https://cars.example.sk/offers/${k}`,
    attributes: { make: "Benchmark", model: modelOf(target), year: 2019, mileageKm: 98_000, fuel: "diesel" },
    publishedAt: new Date().toISOString(),
  };
}

/**
 * Imports offers first … first+count-1 at `RATE` a second, one importCatalogue call each, and waits
 * until the agent has read every one; returns each offer's latency (ms) from the call's start, and
 * how long each call took.
 */
async function feed(
  { services }: Bench,
  agent: Agent,
  count: number,
  first: number,
  target: () => number,
): Promise<{ latencies: number[]; importMs: number[] }> {
  const startedAt = new Float64Array(count);
  const importMs: number[] = [];
  const latencies = new Float64Array(count).fill(Number.NaN);
  let read = 0;
  let resolveAll: () => void = () => {};
  const all = new Promise<void>((resolve) => {
    resolveAll = resolve;
  });
  const stop = agent.onRead((offers, at) => {
    for (const k of offers) {
      const index = k - first;
      if (index < 0 || index >= count || !Number.isNaN(latencies[index] as number)) continue;
      latencies[index] = at - (startedAt[index] as number);
      if (++read === count) resolveAll();
    }
  });
  try {
    const start = clockMs();
    for (let index = 0; index < count; index++) {
      const wait = start + (index * 1000) / RATE - clockMs();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const offer = offerFor(first + index, target());
      startedAt[index] = clockMs();
      const result = await services.offers.importCatalogue([offer]);
      importMs.push(clockMs() - (startedAt[index] as number));
      if (result.matched !== 1)
        throw new Error(`offer ${first + index} matched ${result.matched} intents, not 1`);
    }
    const timeout = new Promise<never>((_, reject) =>
      setTimeout(
        () => reject(new Error(`only ${read} of ${count} offers were read`)),
        RUN_TIMEOUT_MS,
      ).unref(),
    );
    await Promise.race([all, timeout]);
    return { latencies: [...latencies], importMs };
  } finally {
    stop();
  }
}

// ---------------------------------------------------------------------------------------------
// The agent thread

interface Agent {
  url: string;
  secrets: readonly string[];
  send(command: AgentCommand): void;
  onRead(listener: (offers: readonly number[], at: number) => void): () => void;
  roundTrips(
    command: Omit<Extract<AgentCommand, { kind: "round-trips" }>, "kind">,
  ): Promise<{ empty: number[]; one: number[] }>;
  stats(): Promise<AgentStats>;
  close(): Promise<void>;
}

async function startAgent(data: AgentData): Promise<Agent> {
  // Worker threads do not inherit tsx's loader on Node 20: load the TypeScript file through its API.
  const thread = new Worker(
    'const { workerData } = require("node:worker_threads");' +
      'import("tsx/esm/api").then(({ tsImport }) => tsImport(workerData.file, workerData.file));',
    { eval: true, workerData: { ...data, file: new URL("./push-agent.ts", import.meta.url).href } },
  );
  const [hello] = (await once(thread, "message")) as [Extract<AgentReport, { kind: "listening" }>];
  const readers = new Set<(offers: readonly number[], at: number) => void>();
  thread.on("message", (message: AgentReport) => {
    if (message.kind === "read") for (const reader of readers) reader(message.offers, message.at);
  });
  const answer = <K extends AgentReport["kind"]>(kind: K) =>
    new Promise<Extract<AgentReport, { kind: K }>>((resolve, reject) => {
      const onMessage = (message: AgentReport) => {
        if (message.kind !== kind) return;
        thread.off("message", onMessage);
        thread.off("error", reject);
        resolve(message as Extract<AgentReport, { kind: K }>);
      };
      thread.on("message", onMessage);
      thread.once("error", reject);
    });
  return {
    url: `http://127.0.0.1:${hello.port}`,
    secrets: data.intents.map((intent) => intent.secret),
    send: (command) => thread.postMessage(command),
    onRead(listener) {
      readers.add(listener);
      return () => readers.delete(listener);
    },
    async roundTrips(command) {
      const reply = answer("round-trips");
      thread.postMessage({ kind: "round-trips", ...command } satisfies AgentCommand);
      return reply;
    },
    async stats() {
      const reply = answer("stats");
      thread.postMessage({ kind: "stats" } satisfies AgentCommand);
      return (await reply).stats;
    },
    async close() {
      thread.postMessage({ kind: "close" } satisfies AgentCommand);
      await once(thread, "exit");
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Figures

/**
 * The polling agent's latency for an offer: it arrives at a uniformly random moment of the
 * intent's 15-minute poll cycle (random phase), waits for the next poll, and the poll's round trip
 * is one of the measured one-match reads.
 */
function simulatePolling(roundTrips: readonly number[]): number[] {
  const random = seededRandom(42);
  const out: number[] = [];
  for (let i = 0; i < SIMULATED_OFFERS; i++) {
    const wait = random() * POLL_INTERVAL_MS;
    out.push(wait + (roundTrips[Math.floor(random() * roundTrips.length)] as number));
  }
  return out;
}

/** mulberry32: a small seeded generator, so the simulated phases are the same every run. */
function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Summary {
  p50: number;
  p99: number;
  max: number;
}

function summary(values: readonly number[]): Summary {
  const sorted = Float64Array.from(values).sort();
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
  return { p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1] as number };
}

function percentiles(values: readonly number[]): string {
  const s = summary(values);
  return `p50 ${s.p50.toFixed(2)} ms, p99 ${s.p99.toFixed(2)} ms, max ${s.max.toFixed(2)} ms`;
}

/** Milliseconds, or seconds from 10 s up. */
const fmt = (ms: number) => (ms >= 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${ms.toFixed(1)} ms`);
const fmtInt = (n: number) => Math.round(n).toLocaleString("en-US");
const ratio = (r: number) => `${r >= 100 ? fmtInt(r) : r.toFixed(1)}×`;

/** Samples the process's RSS every 100 ms; `peak()` is the largest since the last `reset()`. */
function rssSampler() {
  let max = 0;
  const sample = () => {
    max = Math.max(max, process.memoryUsage().rss);
  };
  const timer = setInterval(sample, 100);
  timer.unref();
  return {
    reset: () => {
      max = 0;
      sample();
    },
    peak: () => {
      sample();
      return Math.round(max / MB);
    },
    stop: () => clearInterval(timer),
  };
}

/** Runs fn(0 … count-1) with at most SETUP_CONCURRENCY in flight; results in index order. */
async function inParallel<T>(count: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  const out = new Array<T>(count);
  let next = 0;
  const lane = async () => {
    for (let i = next++; i < count; i = next++) out[i] = await fn(i);
  };
  await Promise.all(Array.from({ length: SETUP_CONCURRENCY }, lane));
  return out;
}

function intentsToRun(given: string | undefined): number {
  if (given === undefined || given === "") return 1_000;
  const n = Number(given);
  if (!Number.isSafeInteger(n) || n < 10 || n > 1_000_000) {
    throw new Error(`BENCH_PUSH_INTENTS is a whole number from 10 to 1000000, not ${JSON.stringify(given)}`);
  }
  return n;
}
