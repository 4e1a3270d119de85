/**
 * The soak (issue 14): `npm run soak [-- --minutes 2]`. Not a test and not in CI: run by hand, it
 * prints figures for an operator to read.
 *
 * Three `doorbell serve` processes (the built CLI, as shipped: `npm run soak` builds first) on one
 * fresh PostgreSQL database, one set of seal keys, behind a round-robin TCP balancer
 * (packages/cli/test/tcp-round-robin.ts: per connection, as HAProxy's `mode tcp` balances, and
 * nearly free, since the driver shares the machine's cores with what it measures); mail through a
 * real SMTP server and doorbells to a real receiver, both on loopback. Setup, through the balancer
 * as people and agents would: modern (SDK v2) clients publish intents, each person consents and
 * confirms on the pages, agents subscribe push doorbells (three per intent, 1,000 in all) and the
 * people allow them from the mailed links. Then, for `--minutes`: a fourth process
 * (scripts/soak-importer.ts) imports offers at 20 a second, and the clients pull their matches
 * (intent_list_matches with the last `since`) at 200 a second in all, on the modern wire with
 * plain undici requests from their addresses.
 *
 * Printed: errors (goal 0), each process's RSS after the warm-up and at the end, and the median of
 * its 5 s samples in the first and last quarter after the warm-up, with the drifts (goal ≤ 10 % on
 * the medians), the same for each serve process's heap in use and heap kept after a full
 * collection (from its /metrics: the second is the leak signal), pull latency p50/p99 (goal p99 <
 * 100 ms after the warm-up), the CPU each process used during the load, and doorbells delivered
 * against those queued (those not yet delivered split into waiting for a retry and behind one).
 *
 * PostgreSQL: DOORBELL_SOAK_PG_URL, else DOORBELL_TEST_PG_URL (a role allowed to CREATE DATABASE;
 * the soak's database is dropped at the end).
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { sql } from "@doorbell/store";
import { testEngines } from "@doorbell/store/testing";
import { generateSecret } from "@doorbell/webhooks";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Agent, fetch as undiciFetch } from "undici";
import { CLOCK_TICKS, processCpuSeconds } from "../bench/process-cpu.js";
import {
  Browser,
  BUILT_CLI,
  doorbell,
  freePort,
  type Mail,
  type Started,
  startReceiver,
  startSmtp,
  until,
} from "../packages/cli/test/cluster-harness.js";
import { startTcpRoundRobin } from "../packages/cli/test/tcp-round-robin.js";
import { SOAK_MODELS } from "./soak-models.js";

const { values } = parseArgs({
  options: {
    minutes: { type: "string", default: process.env.DOORBELL_SOAK_MINUTES ?? "10" },
    "warm-up": { type: "string" },
    subscriptions: { type: "string", default: "1000" },
    pulls: { type: "string", default: "200" },
    offers: { type: "string", default: "20" },
    clients: { type: "string", default: "20" },
  },
});
const number = (name: string, value: string | undefined, min: number) => {
  const n = Number(value);
  if (!Number.isFinite(n) || n < min) {
    process.stderr.write(`soak: --${name} must be a number of at least ${min}\n`);
    process.exit(2);
  }
  return n;
};
const MINUTES = number("minutes", values.minutes, 0.5);
const WARM_UP_MS = number("warm-up", values["warm-up"] ?? String(Math.min(2, MINUTES / 4)), 0) * 60_000;
const SUBSCRIPTIONS = number("subscriptions", values.subscriptions, 1);
const PULLS_PER_SECOND = number("pulls", values.pulls, 1);
const OFFERS_PER_SECOND = number("offers", values.offers, 1);
const CLIENTS = number("clients", values.clients, 1);
const PER_INTENT = 3;
const INTENTS = Math.ceil(SUBSCRIPTIONS / PER_INTENT);
/** Pulls waiting for an answer at most: past it a due pull is counted late, not sent. */
const MAX_IN_FLIGHT = 400;

const pgUrl = process.env.DOORBELL_SOAK_PG_URL ?? process.env.DOORBELL_TEST_PG_URL;
if (!pgUrl) {
  process.stderr.write(
    "soak: set DOORBELL_SOAK_PG_URL (or DOORBELL_TEST_PG_URL) to a PostgreSQL role allowed to CREATE DATABASE\n",
  );
  process.exit(2);
}
const postgres = testEngines({ env: { DOORBELL_TEST_PG_URL: pgUrl } }).find(
  (engine) => engine.dialect === "postgres",
);
if (postgres === undefined) throw new Error("no PostgreSQL engine");

const say = (line: string) => process.stdout.write(`${line}\n`);
const elapsed = (since: number) => `${((Date.now() - since) / 1000).toFixed(0)} s`;

// ---- measuring ---------------------------------------------------------------------------------

/** Resident set size of process `pid` in bytes (Linux /proc), or undefined once it is gone. */
function rss(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return kb === undefined ? undefined : Number(kb) * 1024;
  } catch {
    return undefined;
  }
}
/**
 * What the soak reads from the serve process on `port`'s /metrics (loopback): its JavaScript heap
 * in use now and kept after its last full collection (undefined before the first one), its heap
 * bound, and where a pull could wait (event loop, collections, its own timings, admission, pool).
 */
async function metricsOf(port: number): Promise<
  | {
      used: number;
      kept: number | undefined;
      bound: number;
      refused: number;
      /** The event loop's longest delay since the last scrape, in seconds. */
      loopMax: number;
      /** Seconds garbage collection has paused the process so far. */
      gcSeconds: number;
      /** /mcp requests answered so far, and how many of them within 100 ms, as the process timed them. */
      answered: number;
      within100ms: number;
      /** Now: MCP requests waiting for admission, and queries waiting for a pool connection. */
      admissionWaiting: number;
      poolWaiting: number;
    }
  | undefined
> {
  try {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const read = (name: string) => {
      const value = new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1];
      return value === undefined ? undefined : Number(value);
    };
    const gcSeconds = [...text.matchAll(/^nodejs_gc_pause_seconds_total\{[^}]*\} (\S+)$/gm)].reduce(
      (sum, match) => sum + Number(match[1]),
      0,
    );
    const mcpSeconds = (series: string) =>
      Number(new RegExp(`^doorbell_http_request_seconds_${series} (\\S+)$`, "m").exec(text)?.[1] ?? 0);
    const used = read("nodejs_heap_size_used_bytes");
    return used === undefined
      ? undefined
      : {
          used,
          kept: read("doorbell_heap_used_after_major_gc_bytes"),
          bound: read("doorbell_mcp_heap_bound_bytes") ?? 0,
          refused: read("doorbell_mcp_requests_refused_heap_total") ?? 0,
          loopMax: read('nodejs_eventloop_lag_seconds\\{quantile="1"\\}') ?? 0,
          gcSeconds,
          answered: mcpSeconds('count\\{route="/mcp"\\}'),
          within100ms: mcpSeconds('bucket\\{le="0.1",route="/mcp"\\}'),
          admissionWaiting: read("doorbell_mcp_requests_waiting") ?? 0,
          poolWaiting: read('doorbell_store_connections\\{state="waiting"\\}') ?? 0,
        };
  } catch {
    return undefined;
  }
}
/** CPU seconds process `pid` has used (user + system), or undefined once it is gone. */
function cpuSeconds(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    return processCpuSeconds(pid);
  } catch {
    return undefined;
  }
}
/** The whole machine's CPU seconds, busy and idle, from /proc/stat. */
function machineCpu(): { busy: number; idle: number } {
  const ticks = (fs.readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "")
    .split(/\s+/)
    .slice(1)
    .map(Number);
  const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
  const all = ticks.slice(0, 8).reduce((sum, n) => sum + n, 0);
  return { busy: (all - idle) / CLOCK_TICKS, idle: idle / CLOCK_TICKS };
}
const mb = (bytes: number | undefined) =>
  bytes === undefined ? "gone" : `${(bytes / 2 ** 20).toFixed(1)} MB`;

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

// ---- clients -----------------------------------------------------------------------------------

interface ToolResult {
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
  content?: unknown[];
}

/** A modern (SDK v2) client whose connections come from its own loopback address. */
async function modernClient(holderUrl: string, address: string) {
  const dispatcher = new Agent({ localAddress: address, connections: 16 });
  const fetchFrom = ((url: string | URL, init?: RequestInit) =>
    undiciFetch(url, { ...(init as object), dispatcher })) as unknown as typeof fetch;
  const client = new Client(
    { name: `soak-${address}`, version: "1.0.0" },
    { versionNegotiation: { mode: "auto" } },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(`${holderUrl}/mcp`), { fetch: fetchFrom }));
  return {
    async ok<T>(tool: string, args: Record<string, unknown>): Promise<T> {
      const result = (await client.callTool({ name: tool, arguments: args })) as ToolResult;
      if (result.isError)
        throw new Error(`${tool} was refused: ${JSON.stringify(result.content).slice(0, 300)}`);
      return result.structuredContent as T;
    },
    async close() {
      await client.close().catch(() => {});
      await dispatcher.close();
    },
  };
}
type ModernClient = Awaited<ReturnType<typeof modernClient>>;

const MODERN = "2026-07-28";

/**
 * A pull on the modern wire with undici's plain request (the bytes the SDK v2 client sends for a
 * tools/call, less the client's own cost, and fetch's, in this process, which shares the CPUs
 * with the holders).
 */
function modernPuller(holderUrl: string, address: string) {
  const dispatcher = new Agent({ localAddress: address, connections: 16 });
  let id = 0;
  return {
    async listMatches(args: Record<string, unknown>): Promise<{ matches: { deliveredAt: string }[] }> {
      const response = await dispatcher.request({
        origin: holderUrl,
        path: "/mcp",
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": MODERN,
          "mcp-method": "tools/call",
          "mcp-name": "intent_list_matches",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: ++id,
          method: "tools/call",
          params: {
            _meta: {
              "io.modelcontextprotocol/protocolVersion": MODERN,
              "io.modelcontextprotocol/clientCapabilities": {},
            },
            name: "intent_list_matches",
            arguments: args,
          },
        }),
      });
      const text = await response.body.text();
      if (response.statusCode !== 200) throw new Error(`HTTP ${response.statusCode}: ${text.slice(0, 200)}`);
      // One JSON body, or an SSE stream with one message.
      const json = text.startsWith("{") ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? "{}");
      const answer = JSON.parse(json) as { result?: ToolResult; error?: { message: string } };
      if (answer.error !== undefined) throw new Error(`JSON-RPC error: ${answer.error.message}`);
      if (answer.result === undefined || answer.result.isError)
        throw new Error(`refused: ${JSON.stringify(answer.result?.content).slice(0, 200)}`);
      return answer.result.structuredContent as { matches: { deliveredAt: string }[] };
    },
    close: () => dispatcher.close(),
  };
}
type Puller = ReturnType<typeof modernPuller>;

/** Runs `task` over `items`, `width` at a time. */
async function inParallel<T>(items: readonly T[], width: number, task: (item: T) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await task(items[next++] as T);
    }),
  );
}

// ---- the soak ----------------------------------------------------------------------------------

interface Person {
  n: number;
  email: string;
  client: ModernClient;
  puller: Puller;
  intentCode: string;
  subscriptions: string[];
  /** The last deliveredAt pulled: the next pull asks for what came after it. */
  since?: string;
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-soak-"));
const env = { DOORBELL_SEAL_KEYS: `soak1:${randomBytes(32).toString("base64")}` };
const secret = generateSecret();
const serves: Started[] = [];
const clients: ModernClient[] = [];
const pullers: Puller[] = [];
const people: Person[] = [];
const begun = Date.now();

const database = await postgres.createDatabase();
// Only the mails the setup follows are kept; digests are counted.
const keep = (mail: Mail) => mail.text.includes("/confirm/") || mail.text.includes("/notifications/");
const smtp = await startSmtp(keep);
const receiver = await startReceiver(secret);
const ports = [await freePort(), await freePort(), await freePort()];
const balancer = await startTcpRoundRobin(ports);
const common = ["--database", database.url, "--smtp", smtp.url, "--public-url", balancer.url];
let importer: Started | undefined;

try {
  for (const [index, port] of ports.entries()) {
    serves.push(
      doorbell(
        `serve ${index + 1}`,
        [
          "serve",
          "--port",
          String(port),
          "--no-demo",
          "--data-dir",
          path.join(dir, `holder-${index + 1}`),
          ...common,
          "--webhook-policy",
          "development",
          // GET /metrics on loopback: the soak reads each process's heap there.
          "--metrics",
          // The soak measures the holder, not its limits: each client may pull at its full rate.
          "--limit",
          "mcp.tool=1000000/60,mcp.session=100000/150",
          "--limit",
          "mail.recipient=1000/3600,mail.client=1000000/3600,mail.interaction=1000/3600",
        ],
        env,
        BUILT_CLI,
        "built",
      ),
    );
  }
  await Promise.all(serves.map((serve) => serve.waitFor("Ctrl+C stops", 180_000)));
  say(`soak: 3 serve processes up behind ${balancer.url} (${elapsed(begun)})`);

  for (let i = 0; i < CLIENTS; i++) {
    clients.push(await modernClient(balancer.url, `127.0.0.${100 + i}`));
    pullers.push(modernPuller(balancer.url, `127.0.0.${100 + i}`));
  }
  const mailsTo = (email: string, marker: string) =>
    smtp.mails.filter((mail) => mail.to === email && mail.text.includes(marker));
  const link = (mail: Mail | undefined, kind: string) =>
    mail === undefined
      ? undefined
      : new RegExp(`${balancer.url}(/${kind}/[0-9A-Za-z_-]+)`).exec(mail.text)?.[1];

  const setUp = async (n: number) => {
    const email = `soak.person${n}@example.sk`;
    const client = clients[n % clients.length] as ModernClient;
    const published = await client.ok<{ intentCode: string; consentUrl: string }>("intent_publish_intent", {
      statement: `A Škoda ${SOAK_MODELS[n % SOAK_MODELS.length]}, diesel, near Bratislava (soak ${n})`,
      criteria: { category: "vehicles", make: "Škoda", model: SOAK_MODELS[n % SOAK_MODELS.length] },
      area: { country: "SK", region: "SK-BL" },
      budget: { amount: 15_000, currency: "EUR" },
    });
    const browser = new Browser(balancer.url);
    const given = await browser.submit(new URL(published.consentUrl).pathname, { email, consent: "yes" });
    if (given.status !== 200) throw new Error(`consent answered ${given.status}`);
    await until(`the confirmation mail to ${email}`, () => mailsTo(email, "/confirm/").length > 0, 120_000);
    const confirmed = await browser.submit(link(mailsTo(email, "/confirm/")[0], "confirm") as string, {});
    if (confirmed.status !== 200) throw new Error(`confirm answered ${confirmed.status}`);
    const puller = pullers[n % pullers.length] as Puller;
    const person: Person = { n, email, client, puller, intentCode: published.intentCode, subscriptions: [] };
    const wanted = Math.min(PER_INTENT, SUBSCRIPTIONS - n * PER_INTENT);
    for (let k = 0; k < wanted; k++) {
      const answer = await client.ok<{ subscriptionId: string }>("intent_subscribe_events", {
        intentCode: person.intentCode,
        delivery: { url: receiver.url(`${n}-${k}`), secret },
      });
      person.subscriptions.push(answer.subscriptionId);
    }
    await until(
      `${wanted} approval mails to ${email}`,
      () => mailsTo(email, "/notifications/").length >= wanted,
      120_000,
    );
    for (const mail of mailsTo(email, "/notifications/")) {
      const approval = link(mail, "notifications") as string;
      const done = await new Browser(balancer.url).submit(approval, {}, `${approval}/allow`);
      if (done.status !== 200) throw new Error(`allowing answered ${done.status}`);
    }
    people.push(person);
  };
  await inParallel(
    Array.from({ length: INTENTS }, (_, n) => n),
    32,
    setUp,
  );
  const subscribed = people.reduce((sum, person) => sum + person.subscriptions.length, 0);
  say(`soak: ${INTENTS} intents confirmed, ${subscribed} push subscriptions allowed (${elapsed(begun)})`);

  // ---- load ----
  importer = doorbell(
    "importer",
    [
      "--database",
      database.url,
      "--public-url",
      balancer.url,
      "--smtp",
      smtp.url,
      "--data-dir",
      path.join(dir, "importer"),
      "--rate",
      String(OFFERS_PER_SECOND),
    ],
    env,
    path.join(import.meta.dirname, "soak-importer.ts"),
    "built",
  );
  // The load starts once the importer has imported its first offers.
  await importer.waitFor('"imported"', 300_000);
  const measured = [...serves, importer];
  const loadStarted = Date.now();
  const cpuAtStart = {
    each: measured.map((p) => cpuSeconds(p.child.pid)),
    own: process.cpuUsage(),
    machine: machineCpu(),
  };
  const loadEnds = loadStarted + MINUTES * 60_000;
  const latencies: number[] = [];
  const warmLatencies: number[] = [];
  const pullErrors: string[] = [];
  let pulled = 0;
  let late = 0;
  let inFlight = 0;
  let warmRss: (number | undefined)[] | undefined;
  // RSS of each process every 5 s after the warm-up: garbage collection swings a busy process by
  // a hundred MB and more, so one reading at each end says little; the medians of the first and
  // the last quarter of the samples move only when the memory kept grows.
  const rssSamples: number[][] = measured.map(() => []);
  // And the heap in use of each serve process: memory the program keeps, apart from the
  // allocator's and V8's reserves that RSS also counts.
  const heapSamples: number[][] = serves.map(() => []);
  const keptSamples: number[][] = serves.map(() => []);
  const heapBounds: ({ bound: number; refused: number } | undefined)[] = serves.map(() => undefined);
  let lastSample = 0;
  let nextPerson = 0;

  const pull = async () => {
    const person = people[nextPerson++ % people.length] as Person;
    inFlight++;
    const at = performance.now();
    try {
      const read = await person.puller.listMatches({
        intentCode: person.intentCode,
        ...(person.since === undefined ? {} : { since: person.since }),
      });
      const took = performance.now() - at;
      latencies.push(took);
      if (warmRss !== undefined) warmLatencies.push(took);
      const last = read.matches.at(-1);
      if (last !== undefined) person.since = last.deliveredAt;
      pulled++;
    } catch (error) {
      if (pullErrors.length < 1000) pullErrors.push((error as Error).message.slice(0, 200));
      else pullErrors.push("");
    } finally {
      inFlight--;
    }
  };

  const pending = new Set<Promise<void>>();
  let sent = 0;
  let lastReport = loadStarted;
  // Per 30 s window, what could hold a pull up besides the database: each serve process's
  // longest event loop delay, its garbage collection pauses, and how many /mcp answers it timed
  // over 100 ms itself (the rest of a slow pull's time was outside its handler); and this
  // process's own delay. `latest` is each process's last reading, `atStart` its totals when the
  // window began (its first reading, then each window's end).
  type Totals = { gcSeconds: number; answered: number; within100ms: number };
  const latest = ports.map(() => ({
    loopMax: 0,
    gcSeconds: 0,
    answered: 0,
    within100ms: 0,
    admissionWaiting: 0,
    poolWaiting: 0,
  }));
  let atStart: Array<Totals | undefined> = ports.map(() => undefined);
  const ownLoop = monitorEventLoopDelay({ resolution: 10 });
  ownLoop.enable();
  const ms = (seconds: number) => `${Math.round(seconds * 1000)} ms`;
  while (Date.now() < loadEnds) {
    const now = Date.now();
    if (warmRss === undefined && now - loadStarted >= WARM_UP_MS) {
      warmRss = measured.map((p) => rss(p.child.pid));
      say(`soak: warm-up over; RSS ${measured.map((p, i) => `${p.name} ${mb(warmRss?.[i])}`).join(", ")}`);
    }
    if (now - lastSample >= 5_000) {
      lastSample = now;
      const warm = warmRss !== undefined;
      for (const [i, p] of measured.entries()) {
        const bytes = rss(p.child.pid);
        if (warm && bytes !== undefined) rssSamples[i]?.push(bytes);
      }
      for (const [i, port] of ports.entries()) {
        void metricsOf(port).then((read) => {
          if (read === undefined) return;
          atStart[i] ??= read;
          const last = latest[i];
          latest[i] = {
            ...read,
            loopMax: Math.max(last?.loopMax ?? 0, read.loopMax),
            admissionWaiting: Math.max(last?.admissionWaiting ?? 0, read.admissionWaiting),
            poolWaiting: Math.max(last?.poolWaiting ?? 0, read.poolWaiting),
          };
          if (!warm) return;
          heapSamples[i]?.push(read.used);
          if (read.kept !== undefined) keptSamples[i]?.push(read.kept);
          heapBounds[i] = { bound: read.bound, refused: read.refused };
        });
      }
    }
    const due = Math.floor(((now - loadStarted) / 1000) * PULLS_PER_SECOND);
    while (sent < due) {
      sent++;
      if (inFlight >= MAX_IN_FLIGHT) {
        late++;
        continue;
      }
      const running = pull();
      pending.add(running);
      void running.finally(() => pending.delete(running));
    }
    if (now - lastReport >= 30_000) {
      lastReport = now;
      const sorted = [...latencies.slice(-6000)].sort((a, b) => a - b);
      say(
        `soak: ${elapsed(loadStarted)}: ${pulled} pulls (${(pulled / ((now - loadStarted) / 1000)).toFixed(1)}/s), ` +
          `recent p50 ${percentile(sorted, 50).toFixed(1)} ms p99 ${percentile(sorted, 99).toFixed(1)} ms, ` +
          `errors ${pullErrors.length}, late ${late}; RSS ${measured.map((p) => mb(rss(p.child.pid))).join(" / ")}; ` +
          `serve event loop at most ${latest.map((last) => ms(last.loopMax)).join(" / ")} late, ` +
          `GC paused ${latest.map((last, i) => ms(last.gcSeconds - (atStart[i]?.gcSeconds ?? 0))).join(" / ")}, ` +
          `/mcp answers over 100 ms as the serve processes timed them ${latest
            .map((last, i) => {
              const answered = last.answered - (atStart[i]?.answered ?? 0);
              return `${answered - (last.within100ms - (atStart[i]?.within100ms ?? 0))} of ${answered}`;
            })
            .join(" / ")}, ` +
          `most waiting for admission ${latest.map((last) => last.admissionWaiting).join(" / ")} ` +
          `and for a pool connection ${latest.map((last) => last.poolWaiting).join(" / ")} (5 s samples); ` +
          `this process's event loop at most ${ms(ownLoop.max / 1e9)} late`,
      );
      atStart = latest.map((last) => ({ ...last }));
      for (const last of latest) Object.assign(last, { loopMax: 0, admissionWaiting: 0, poolWaiting: 0 });
      ownLoop.reset();
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  await Promise.all(pending);
  const loadSeconds = (Date.now() - loadStarted) / 1000;
  const endRss = measured.map((p) => rss(p.child.pid));
  const cpuAtEnd = {
    each: measured.map((p) => cpuSeconds(p.child.pid)),
    own: process.cpuUsage(),
    machine: machineCpu(),
  };
  importer.child.kill("SIGTERM");
  await importer.exited;
  // Its last JSON line: how many it imported and how many imports failed.
  let importerSummary: { imported?: number; errors?: number } = {};
  for (const line of importer.out.text.trim().split("\n")) {
    try {
      importerSummary = JSON.parse(line) as typeof importerSummary;
    } catch {}
  }

  // ---- drain and count ----
  const undelivered = async () =>
    (
      await sql<{ n: number }>`select count(*)::int as n from delivery_outbox o
        left join delivery_progress p on p.subscription_id = o.subscription_id
        where o.seq > coalesce(p.delivered_seq, 0)`.execute(database.db.db)
    ).rows[0]?.n ?? 0;
  const drainedBy = await until("the outbox to drain", async () => (await undelivered()) === 0, 120_000).then(
    () => "drained",
    () => "not drained after 120 s",
  );
  const queued =
    (
      await sql<{
        n: number;
      }>`select coalesce(sum(next_seq - 1), 0)::int as n from delivery_subscriptions`.execute(database.db.db)
    ).rows[0]?.n ?? 0;
  const waitingMatches =
    (
      await sql<{
        n: number;
      }>`select coalesce(sum(agg_new_matches), 0)::int as n from delivery_subscriptions`.execute(
        database.db.db,
      )
    ).rows[0]?.n ?? 0;
  // What still waits, and why: a doorbell whose last attempt failed (a receiver too slow under the
  // load answers after the timeout) waits for its retry, and the ones behind it in its subscription
  // wait for it (FIFO).
  const waiting = (
    await sql<{ retrying: number; behind: number; next_retry: number | null }>`select
        count(*) filter (where o.attempts > 0)::int as retrying,
        count(*) filter (where o.attempts = 0)::int as behind,
        min(o.next_attempt_at) filter (where o.attempts > 0) as next_retry
      from delivery_outbox o
      left join delivery_progress p on p.subscription_id = o.subscription_id
      where o.seq > coalesce(p.delivered_seq, 0)`.execute(database.db.db)
  ).rows[0];
  // Why attempts failed, from the delivery log (category and HTTP status, never a body or URL).
  const failedAttempts = (
    await sql<{ category: string; http_status: number | null; n: number }>`select category, http_status,
        count(*)::int as n from delivery_attempt_log where category <> 'success'
      group by category, http_status order by n desc`.execute(database.db.db)
  ).rows;
  const dead =
    (await sql<{ n: number }>`select count(*)::int as n from delivery_dead_letters`.execute(database.db.db))
      .rows[0]?.n ?? 0;
  const delivered = new Set(receiver.verified.map((d) => d.webhookId)).size;
  const unverified = receiver.arrivals.filter(
    (a) =>
      a.type !== "subscription.verification" && !receiver.verified.some((d) => d.webhookId === a.webhookId),
  ).length;
  const matchesRung = receiver.verified
    .filter((d) => d.type === "intent.matches.delivered")
    .reduce((sum, d) => sum + Number(d.data.newMatches), 0);
  const exited = serves.filter((serve) => serve.child.exitCode !== null).length;

  // ---- figures ----
  const all = [...latencies].sort((a, b) => a - b);
  const warm = [...warmLatencies].sort((a, b) => a - b);
  const errors = pullErrors.length + (importerSummary.errors ?? 0) + exited + unverified + dead;
  say("");
  say(
    `soak figures: 3 serve processes on PostgreSQL behind a round-robin TCP balancer, ${subscribed} push subscriptions ` +
      `(${people.length} intents), target ${PULLS_PER_SECOND} pulls/s and ${OFFERS_PER_SECOND} offers/s, ` +
      `load ${(loadSeconds / 60).toFixed(1)} min (warm-up ${(WARM_UP_MS / 60_000).toFixed(1)} min), node ${process.version}, ${os.cpus().length} CPUs`,
  );
  say(
    `errors: ${errors} (pulls ${pullErrors.length}, imports ${importerSummary.errors ?? "?"}, ` +
      `serve processes exited ${exited}, doorbells failing verification ${unverified}, dead letters ${dead})`,
  );
  for (const message of [...new Set(pullErrors)].slice(0, 5)) say(`  pull error: ${message}`);
  say(
    `pulls: ${pulled} answered in ${loadSeconds.toFixed(0)} s (${(pulled / loadSeconds).toFixed(1)}/s), ` +
      `${late} not sent (${MAX_IN_FLIGHT} already waiting)`,
  );
  say(
    `pull latency: p50 ${percentile(all, 50).toFixed(1)} ms, p99 ${percentile(all, 99).toFixed(1)} ms ` +
      `(after warm-up: p50 ${percentile(warm, 50).toFixed(1)} ms, p99 ${percentile(warm, 99).toFixed(1)} ms)`,
  );
  say(`connections the balancer gave each serve process: ${balancer.connections.join(", ")}`);
  say(
    `offers imported: ${importerSummary.imported ?? "?"} (${((importerSummary.imported ?? 0) / loadSeconds).toFixed(1)}/s)`,
  );
  // Where the machine's CPU went during the load, in cores (CPU seconds per second).
  const cores = (seconds: number | undefined) =>
    seconds === undefined ? "gone" : (seconds / loadSeconds).toFixed(2);
  const used = measured.map((_, i) => {
    const [start, end] = [cpuAtStart.each[i], cpuAtEnd.each[i]];
    return start === undefined || end === undefined ? undefined : end - start;
  });
  const own = (cpuAtEnd.own.user + cpuAtEnd.own.system - cpuAtStart.own.user - cpuAtStart.own.system) / 1e6;
  const busy = cpuAtEnd.machine.busy - cpuAtStart.machine.busy;
  const idle = cpuAtEnd.machine.idle - cpuAtStart.machine.idle;
  const rest = busy - own - used.reduce<number>((sum, seconds) => sum + (seconds ?? 0), 0);
  const serveCpu = used.slice(0, serves.length).reduce<number>((sum, seconds) => sum + (seconds ?? 0), 0);
  say(
    `CPU during the load, in cores: ${measured.map((p, i) => `${p.name} ${cores(used[i])}`).join(", ")}, ` +
      `this process (clients, balancer, receiver) ${cores(own)}, the rest (PostgreSQL, kernel) ${cores(rest)}; ` +
      `idle ${((idle / (busy + idle)) * 100).toFixed(0)} % of ${os.cpus().length} cores; ` +
      `serve CPU per pull ${((serveCpu / Math.max(1, pulled)) * 1e6).toFixed(0)} µs (imports and doorbells included)`,
  );
  say("RSS after warm-up → at end (drift); median of the first → last quarter of the 5 s samples (drift):");
  const median = (values: readonly number[]) =>
    percentile(
      [...values].sort((a, b) => a - b),
      50,
    );
  /** The medians of the first and the last quarter of a series, and how far the second is from the first. */
  const quarters = (samples: readonly number[]) => {
    const quarter = Math.max(1, Math.floor(samples.length / 4));
    const first = median(samples.slice(0, quarter));
    const last = median(samples.slice(-quarter));
    return { first, last, drift: ((last - first) / first) * 100 };
  };
  const signed = (drift: number) =>
    Number.isFinite(drift) ? `${drift >= 0 ? "+" : ""}${drift.toFixed(1)} %` : "n/a";
  let worstDrift = 0;
  let worstMedianDrift = 0;
  for (const [i, p] of measured.entries()) {
    const before = warmRss?.[i];
    const after = endRss[i];
    const drift =
      before !== undefined && after !== undefined ? ((after - before) / before) * 100 : Number.NaN;
    if (Number.isFinite(drift)) worstDrift = Math.max(worstDrift, drift);
    const samples = rssSamples[i] ?? [];
    const { first, last, drift: medianDrift } = quarters(samples);
    if (Number.isFinite(medianDrift)) worstMedianDrift = Math.max(worstMedianDrift, medianDrift);
    say(
      `  ${p.name}: ${mb(before)} → ${mb(after)} (${signed(drift)}); ${mb(first)} → ${mb(last)} (${signed(medianDrift)}), ` +
        `range ${mb(Math.min(...samples))}–${mb(Math.max(...samples))} over ${samples.length} samples`,
    );
  }
  const heapLine = (name: string, samples: readonly number[]) => {
    const { first, last, drift } = quarters(samples);
    return `  ${name}: ${mb(first)} → ${mb(last)} (${signed(drift)}), range ${mb(Math.min(...samples))}–${mb(Math.max(...samples))} over ${samples.length} samples`;
  };
  say("JavaScript heap in use, median of the first → last quarter of the 5 s samples (drift):");
  for (const [i, p] of serves.entries()) say(heapLine(p.name, heapSamples[i] ?? []));
  say("JavaScript heap kept after the last full collection, the same way (the leak signal):");
  for (const [i, p] of serves.entries()) say(heapLine(p.name, keptSamples[i] ?? []));
  say(
    `heap bound each process chose from the machine (no new MCP request past it): ${serves
      .map((p, i) => {
        const seen = heapBounds[i];
        return seen === undefined
          ? `${p.name} unknown`
          : `${p.name} ${mb(seen.bound)}, ${seen.refused} refused for it`;
      })
      .join("; ")}`,
  );
  say(
    `doorbells: ${delivered} delivered of ${queued} queued (${drainedBy}); they counted ${matchesRung} matches, ` +
      `${waitingMatches} more wait in the 15-minute coalescing windows; ${smtp.counted.all} mails sent`,
  );
  if (waiting !== undefined && waiting.retrying + waiting.behind > 0) {
    const nextRetry =
      waiting.next_retry === null
        ? ""
        : `, the next in ${((Number(waiting.next_retry) - Date.now()) / 1000).toFixed(0)} s`;
    say(
      `  not yet delivered: ${waiting.retrying} wait for a retry after a failed attempt${nextRetry}; ` +
        `${waiting.behind} not yet tried (behind those, in order)`,
    );
  }
  if (failedAttempts.length > 0) {
    say(
      `  failed attempts: ${failedAttempts.map((f) => `${f.n} ${f.category}${f.http_status === null ? "" : ` (HTTP ${f.http_status})`}`).join(", ")}`,
    );
  }
  say(
    `goals: errors 0 ${errors === 0 ? "met" : "MISSED"}; ` +
      `p99 < 100 ms after warm-up ${percentile(warm, 99) < 100 ? "met" : "MISSED"}; RSS drift ≤ 10 % ${worstMedianDrift <= 10 ? "met" : "MISSED"} ` +
      `(worst median drift ${worstMedianDrift.toFixed(1)} %; end to end ${worstDrift.toFixed(1)} %); ` +
      `doorbells ${delivered === queued ? "all delivered" : "NOT all delivered"}`,
  );
  process.exitCode = errors === 0 && delivered === queued ? 0 : 1;
} catch (error) {
  process.stderr.write(`soak failed: ${(error as Error).stack ?? error}\n`);
  for (const p of [...serves, ...(importer ? [importer] : [])]) {
    process.stderr.write(`=== ${p.name}\n${p.out.errors.slice(-3000)}\n`);
  }
  process.exitCode = 1;
} finally {
  await Promise.allSettled([...clients.map((client) => client.close()), ...pullers.map((p) => p.close())]);
  for (const p of [...serves, ...(importer ? [importer] : [])])
    if (p.child.exitCode === null) p.child.kill("SIGTERM");
  await Promise.all([...serves, ...(importer ? [importer] : [])].map((p) => p.exited));
  await balancer.close();
  await receiver.close();
  await smtp.close();
  await postgres.cleanup();
  fs.rmSync(dir, { recursive: true, force: true });
}
