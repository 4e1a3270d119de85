import { randomUUID } from "node:crypto";
import { createServer, type Server as HttpServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Worker } from "node:worker_threads";
import {
  createEventsServer,
  EVENTS_METHODS,
  type EventsServer,
  handleEventsHttpRequest,
} from "@doorbell/mcp-events";
import { createMcpSigner, developmentPolicy, generateSecret } from "@doorbell/webhooks";
import { getRequestListener } from "@hono/node-server";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { createMcpHandler, McpServer as McpServerV2 } from "@modelcontextprotocol/server";
import { Agent, request } from "undici";
import { z } from "zod";
import { scopedSignalFetch } from "../packages/mcp-endpoint/src/client-fetch.js";
import { type Measurement, printComparison } from "./harness.js";

// MCP Events (`@doorbell/mcp-events`) over Streamable HTTP on loopback, three figures each beside a
// baseline measured in the same run:
//  1. an empty `events/poll` round trip beside a constant `tools/call` on the same server and
//     session (goal ≥ 0.9×): sequential, one SDK Client, interleaved rounds, median;
//  2. push fan-out: events per second reaching 100 open `events/stream` streams, beside a plain
//     node:http server writing the same SSE frames to 100 open responses (same reader for both);
//  3. webhook: events per second through the delivery engine (sketch channel, X-MCP-* signatures)
//     to a loopback receiver in a worker thread, beside a raw undici keep-alive POST loop that
//     signs and posts the same bodies with the same concurrency.

const POLL_ROUNDS = 11;
const POLL_ROUND_MS = 1_000;
const STREAMS = 100;
const FANOUT_EVENTS = 500;
// Runs alternate ours and the baseline; more runs keep a burst of machine load from deciding a ratio.
const FANOUT_RUNS = 5;
const HOOK_RUNS = 4;
const HOOK_SUBSCRIPTIONS = 16;
const HOOK_EVENTS_PER_SUBSCRIPTION = 250;
const TYPE = "bench.tick";

export async function benchEvents(): Promise<void> {
  console.log(
    `Node ${process.version}; loopback; Streamable HTTP in session mode (one SDK server per session).`,
  );
  // DOORBELL_BENCH_EVENTS=fanout,webhook runs only those parts (e.g. under --cpu-prof).
  const only = process.env.DOORBELL_BENCH_EVENTS?.split(",");
  const parts: [string, () => Promise<void>][] = [
    ["poll", benchPoll],
    ["poll-modern", benchPollModern],
    ["fanout", benchFanout],
    ["webhook", benchWebhook],
  ];
  for (const [name, run] of parts) if (!only || only.includes(name)) await run();
}

// ---------------------------------------------------------------------------------------------
// The server under test: one events server, an emit-only type, and a constant tool beside it.

interface Served {
  events: EventsServer;
  url: URL;
  close(): Promise<void>;
}

async function serve(options: Parameters<typeof createEventsServer>[0] = {}): Promise<Served> {
  const events = await createEventsServer({ heartbeatMs: 30_000, ...options });
  events.event({ name: TYPE, description: "A benchmark event" });
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const http = createServer(
    { keepAliveTimeout: 60_000 },
    getRequestListener(async (req) => {
      const id = req.headers.get("mcp-session-id");
      let transport = id ? sessions.get(id) : undefined;
      if (!transport) {
        const fresh = new WebStandardStreamableHTTPServerTransport({
          sessionIdGenerator: randomUUID,
          onsessioninitialized: (sid) => {
            sessions.set(sid, fresh);
          },
        });
        const server = new McpServer({ name: "bench-events", version: "1.0.0" });
        server.registerTool("constant", { description: "returns a constant" }, async () => ({
          content: [{ type: "text", text: "ok" }],
        }));
        events.attach(server);
        await server.connect(fresh);
        transport = fresh;
      }
      return handleEventsHttpRequest(events, transport, req);
    }),
  );
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return {
    events,
    url: new URL(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`),
    async close() {
      for (const transport of sessions.values()) await transport.close().catch(() => undefined);
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
      await events.close();
    },
  };
}

async function connect(url: URL): Promise<Client> {
  const client = new Client({ name: "bench", version: "1.0.0" });
  // The SDK adds an abort listener per call to one long-lived signal: scope it per request.
  await client.connect(new StreamableHTTPClientTransport(url, { fetch: scopedSignalFetch() }));
  return client;
}

// ---------------------------------------------------------------------------------------------
// 1. Empty poll vs constant tools/call

const pollResult = z.object({ events: z.array(z.unknown()), cursor: z.string() }).passthrough();

async function benchPoll(): Promise<void> {
  const served = await serve();
  const client = await connect(served.url);
  try {
    const first = await client.request(
      { method: EVENTS_METHODS.poll, params: { name: TYPE, params: {}, cursor: null } },
      pollResult,
    );
    const cursor = first.cursor;
    const poll = async () => {
      const result = await client.request(
        { method: EVENTS_METHODS.poll, params: { name: TYPE, params: {}, cursor } },
        pollResult,
      );
      if (result.events.length !== 0) throw new Error("the poll was not empty");
    };
    const call = async () => {
      const result = await client.callTool({ name: "constant", arguments: {} });
      if (result.isError) throw new Error("the constant tool failed");
    };
    for (let i = 0; i < 300; i++) {
      await poll();
      await call();
    }
    const rounds = await interleaved(
      [
        ["events/poll, empty (cursor at the head)", poll],
        ["tools/call of a constant tool, same server and session", call],
      ],
      POLL_ROUNDS,
      POLL_ROUND_MS,
    );
    printComparison(
      `Round trips/s, sequential over one session (${POLL_ROUNDS} interleaved rounds of ${POLL_ROUND_MS} ms, median; goal ≥ 0.90×):`,
      rounds,
    );
  } finally {
    await client.close();
    await served.close();
  }
}

// ---------------------------------------------------------------------------------------------
// 1b. The same on SDK v2's modern path: createMcpHandler, a fresh McpServer per request (what the
// holder serves), protocol 2026-07-28 requests written as deployed clients write them.

async function benchPollModern(): Promise<void> {
  const events = await createEventsServer({ heartbeatMs: 30_000 });
  events.event({ name: TYPE, description: "A benchmark event", payloadSchema: { type: "object" } });
  const handler = createMcpHandler(() => {
    const server = new McpServerV2({ name: "bench-events-modern", version: "1.0.0" });
    server.registerTool("constant", { description: "returns a constant" }, async () => ({
      content: [{ type: "text", text: "ok" }],
    }));
    events.attach(server);
    return server;
  });
  const http = createServer(
    { keepAliveTimeout: 60_000 },
    getRequestListener((req) => handler.fetch(req)),
  );
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  // pipelining 1: keep-alive, one request at a time (0 would open a connection per request).
  const agent = new Agent({ connections: 1, pipelining: 1, keepAliveTimeout: 60_000 });
  let id = 0;
  const send = async (method: string, params: Record<string, unknown>, name?: string) => {
    id += 1;
    const response = await request(url, {
      method: "POST",
      dispatcher: agent,
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": method,
        ...(name === undefined ? {} : { "mcp-name": name }),
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id,
        method,
        params: {
          ...params,
          _meta: {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
          },
        },
      }),
    });
    const body = (await response.body.json()) as { result?: Record<string, unknown>; error?: unknown };
    if (!body.result) throw new Error(`${method} failed: ${JSON.stringify(body.error)}`);
    return body.result;
  };
  try {
    const first = await send(EVENTS_METHODS.poll, { name: TYPE, arguments: {}, cursor: null });
    const cursor = first.cursor;
    const poll = async () => {
      const result = await send(EVENTS_METHODS.poll, { name: TYPE, arguments: {}, cursor });
      if ((result.events as unknown[]).length !== 0) throw new Error("the poll was not empty");
    };
    const call = async () => {
      const result = await send("tools/call", { name: "constant", arguments: {} }, "constant");
      if (result.isError) throw new Error("the constant tool failed");
    };
    for (let i = 0; i < 300; i++) {
      await poll();
      await call();
    }
    const rounds = await interleaved(
      [
        ["events/poll, empty, modern 2026-07-28 (fresh McpServer per request)", poll],
        ["tools/call of a constant tool, same handler", call],
      ],
      POLL_ROUNDS,
      POLL_ROUND_MS,
    );
    printComparison(
      `Modern path round trips/s, sequential, one keep-alive connection (${POLL_ROUNDS} interleaved rounds of ${POLL_ROUND_MS} ms, median; goal ≥ 0.90×):`,
      rounds,
    );
  } finally {
    await agent.close();
    http.closeAllConnections();
    await new Promise<void>((resolve) => http.close(() => resolve()));
    await handler.close();
    await events.close();
  }
}

async function interleaved(
  candidates: readonly (readonly [string, () => Promise<void>])[],
  rounds: number,
  roundMs: number,
): Promise<Measurement[]> {
  const rates: number[][] = candidates.map(() => []);
  for (let round = 0; round < rounds; round++) {
    for (const [index, [, fn]] of candidates.entries()) {
      let ops = 0;
      const start = performance.now();
      while (performance.now() - start < roundMs) {
        await fn();
        ops++;
      }
      rates[index]?.push((ops / (performance.now() - start)) * 1000);
    }
  }
  return candidates.map(([name], index) => ({ name, opsPerSecond: median(rates[index] as number[]) }));
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

// ---------------------------------------------------------------------------------------------
// 2. Push fan-out to 100 open streams

const EVENT_MARK = '"method":"notifications/events/event"';

/** Counts event frames on one SSE response, with a carry-over so a mark split across chunks counts once. */
function countFrames(body: AsyncIterable<Buffer>, onFrame: () => void): Promise<void> {
  return (async () => {
    let tail = "";
    for await (const chunk of body) {
      const text = tail + chunk.toString("utf8");
      let at = text.indexOf(EVENT_MARK);
      let last = -1;
      while (at !== -1) {
        onFrame();
        last = at;
        at = text.indexOf(EVENT_MARK, at + EVENT_MARK.length);
      }
      const keep = Math.max(last + EVENT_MARK.length, text.length - EVENT_MARK.length);
      tail = text.slice(keep);
    }
  })().catch(() => undefined);
}

interface Streams {
  /** Resolves when every stream has received `n` more event frames. */
  expect(n: number): Promise<void>;
  close(): Promise<void>;
}

/** Opens `STREAMS` events/stream POSTs on one raw session; each counts its frames. */
async function openEventStreams(url: URL, agent: Agent): Promise<Streams> {
  const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
  const init = await request(url, {
    method: "POST",
    headers,
    dispatcher: agent,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "bench", version: "1" },
      },
    }),
  });
  const session = String(init.headers["mcp-session-id"]);
  await init.body.dump();
  const sessionHeaders = { ...headers, "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" };
  await (
    await request(url, {
      method: "POST",
      headers: sessionHeaders,
      dispatcher: agent,
      body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    })
  ).body.dump();
  return countingStreams(STREAMS, async (i, onFrame) => {
    const response = await request(url, {
      method: "POST",
      headers: sessionHeaders,
      dispatcher: agent,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: i + 1,
        method: EVENTS_METHODS.stream,
        params: { id: `s${i}`, name: TYPE, params: {}, cursor: null },
      }),
    });
    void countFrames(response.body, onFrame);
  });
}

function countingStreams(
  count: number,
  open: (i: number, onFrame: () => void) => Promise<void>,
): Promise<Streams> & Promise<Streams> {
  const counts = new Array<number>(count).fill(0);
  let waiting: { target: number; resolve: () => void } | undefined;
  let total = 0;
  const onFrame = (i: number) => () => {
    counts[i] = (counts[i] as number) + 1;
    total++;
    if (waiting && total >= waiting.target && counts.every((c) => c >= (waiting?.target ?? 0) / count)) {
      const done = waiting;
      waiting = undefined;
      done.resolve();
    }
  };
  return (async () => {
    await Promise.all(Array.from({ length: count }, (_, i) => open(i, onFrame(i))));
    return {
      expect: (n: number) =>
        new Promise<void>((resolve) => {
          waiting = { target: total + n * count, resolve };
        }),
      close: async () => undefined,
    };
  })();
}

async function benchFanout(): Promise<void> {
  const served = await serve();
  const raw = await startRawSse();
  const agent = new Agent({ connections: STREAMS + 10, keepAliveTimeout: 60_000 });
  const rawAgent = new Agent({ connections: STREAMS + 10, keepAliveTimeout: 60_000 });
  try {
    const ours = await openEventStreams(served.url, agent);
    // The streams are live once the server counts them (each sent its `active` first).
    while (served.events.liveSubscriptions < STREAMS) await new Promise((r) => setTimeout(r, 10));
    const rawStreams = await countingStreams(STREAMS, async (_i, onFrame) => {
      const response = await request(raw.url, { method: "POST", dispatcher: rawAgent, body: "{}" });
      void countFrames(response.body, onFrame);
    });
    while (raw.open() < STREAMS) await new Promise((r) => setTimeout(r, 10));
    const frame = (i: number) =>
      `event: message\ndata: ${JSON.stringify({
        jsonrpc: "2.0",
        method: "notifications/events/event",
        params: {
          requestId: 1,
          id: "s0",
          eventId: `evt_${i}`,
          name: TYPE,
          timestamp: new Date().toISOString(),
          data: { i },
          cursor: `x.${i}`,
        },
      })}\n\n`;
    const oursRates: number[] = [];
    const rawRates: number[] = [];
    for (let run = 0; run < FANOUT_RUNS; run++) {
      let done = ours.expect(FANOUT_EVENTS);
      let start = performance.now();
      for (let i = 0; i < FANOUT_EVENTS; i++) served.events.emit(TYPE, { data: { i } });
      await done;
      oursRates.push(((FANOUT_EVENTS * STREAMS) / (performance.now() - start)) * 1000);

      done = rawStreams.expect(FANOUT_EVENTS);
      start = performance.now();
      for (let i = 0; i < FANOUT_EVENTS; i++) raw.write(frame(i));
      await done;
      rawRates.push(((FANOUT_EVENTS * STREAMS) / (performance.now() - start)) * 1000);
    }
    printComparison(
      `Push fan-out: event frames/s reaching ${STREAMS} open streams (${FANOUT_EVENTS} emits × ${STREAMS} streams, median of ${FANOUT_RUNS}):`,
      [
        { name: `emit() → events/stream SSE ×${STREAMS}`, opsPerSecond: median(oursRates) },
        { name: `raw node:http SSE writes ×${STREAMS}, same frames`, opsPerSecond: median(rawRates) },
      ],
    );
  } finally {
    await agent.destroy();
    await rawAgent.destroy();
    await raw.close();
    await served.close();
  }
}

/** The primitive: SSE responses held open by a plain node:http server, each written the same frames. */
async function startRawSse() {
  const open = new Set<ServerResponse>();
  const http: HttpServer = createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
    req.resume();
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    res.flushHeaders();
    open.add(res);
    res.on("close", () => open.delete(res));
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/sse`,
    open: () => open.size,
    write(frame: string) {
      for (const res of open) res.write(frame);
    },
    async close() {
      for (const res of open) res.end();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

// ---------------------------------------------------------------------------------------------
// 3. Webhook deliveries through the delivery engine

/** A loopback receiver in a worker thread: echoes challenges, counts distinct (subscription, i). */
const RECEIVER_SOURCE = `
const { parentPort } = require("node:worker_threads");
const { createServer } = require("node:http");
let expected = 0, seen = new Set(), run = -1, received = 0;
const server = createServer({ keepAliveTimeout: 60000 }, (req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    let body;
    try { body = JSON.parse(Buffer.concat(chunks).toString("utf8")); } catch { res.writeHead(400).end(); return; }
    if (body.type === "verification") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ challenge: body.challenge }));
      return;
    }
    res.writeHead(200, { "content-length": "0" }).end();
    const data = body.data || {};
    if (data.r !== run) return;
    received++;
    seen.add(String(body.id) + ":" + data.i);
    if (seen.size === expected) { parentPort.postMessage({ kind: "done", received }); run = -1; }
  });
});
server.listen(0, "127.0.0.1", () => parentPort.postMessage({ kind: "listening", port: server.address().port }));
parentPort.on("message", (m) => {
  if (m.kind === "expect") { run = m.r; expected = m.n; seen = new Set(); received = 0; }
  if (m.kind === "close") server.close(() => process.exit(0));
});
`;

async function startHookReceiver() {
  const thread = new Worker(RECEIVER_SOURCE, { eval: true });
  const port = await new Promise<number>((resolve) =>
    thread.once("message", (m: { kind: string; port: number }) => resolve(m.port)),
  );
  let r = 0;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    expect(n: number): { r: number; done: Promise<number> } {
      r++;
      thread.postMessage({ kind: "expect", r, n });
      const done = new Promise<number>((resolve) =>
        thread.once("message", (m: { kind: string; received: number }) => resolve(m.received)),
      );
      return { r, done };
    },
    close: () => thread.terminate(),
  };
}

async function benchWebhook(): Promise<void> {
  const served = await serve({
    webhook: { policy: developmentPolicy(), allowAnonymous: true, ttlMs: 30 * 60_000 },
  });
  const receiver = await startHookReceiver();
  const client = await connect(served.url);
  const total = HOOK_SUBSCRIPTIONS * HOOK_EVENTS_PER_SUBSCRIPTION;
  try {
    const secrets: string[] = [];
    for (let s = 0; s < HOOK_SUBSCRIPTIONS; s++) {
      const secret = generateSecret();
      secrets.push(secret);
      await client.request(
        {
          method: EVENTS_METHODS.subscribe,
          params: {
            id: randomUUID(),
            name: TYPE,
            params: {},
            delivery: { mode: "webhook", url: `${receiver.url}/${s}`, secret },
            cursor: null,
          },
        },
        z.object({ id: z.string() }).passthrough(),
      );
    }
    const rates: { ours: number[]; raw: number[] } = { ours: [], raw: [] };
    for (let run = 0; run < HOOK_RUNS; run++) {
      const ours = receiver.expect(total);
      let start = performance.now();
      for (let i = 0; i < HOOK_EVENTS_PER_SUBSCRIPTION; i++)
        served.events.emit(TYPE, { data: { r: ours.r, i, t: Date.now() } });
      await ours.done;
      rates.ours.push((total / (performance.now() - start)) * 1000);

      const raw = receiver.expect(total);
      start = performance.now();
      await rawPostLoop(receiver.url, secrets, raw.r);
      await raw.done;
      rates.raw.push((total / (performance.now() - start)) * 1000);
    }
    printComparison(
      `Webhook: events/s delivered to a loopback receiver (${HOOK_SUBSCRIPTIONS} subscriptions × ${HOOK_EVENTS_PER_SUBSCRIPTION} emits, in-memory outbox, best of ${HOOK_RUNS}):`,
      [
        { name: "emit() → delivery engine → signed POST", opsPerSecond: Math.max(...rates.ours) },
        {
          name: `raw undici keep-alive POST loop, ${HOOK_SUBSCRIPTIONS} concurrent`,
          opsPerSecond: Math.max(...rates.raw),
        },
      ],
    );
  } finally {
    await client.close();
    await served.close();
    await receiver.close();
  }
}

/** The ceiling: the same bodies, X-MCP-signed, one keep-alive loop per subscription. */
async function rawPostLoop(base: string, secrets: string[], r: number): Promise<void> {
  const agent = new Agent({ keepAliveTimeout: 60_000 });
  try {
    await Promise.all(
      secrets.map(async (secret, s) => {
        const signer = createMcpSigner(secret);
        const id = `sub-${s}-${"0".repeat(30)}`;
        for (let i = 0; i < HOOK_EVENTS_PER_SUBSCRIPTION; i++) {
          const body = Buffer.from(
            JSON.stringify({
              id,
              eventId: `evt_${randomUUID()}`,
              name: TYPE,
              timestamp: new Date().toISOString(),
              data: { r, i, t: Date.now() },
              cursor: `x.${i}`,
            }),
          );
          const headers = signer.headers({
            subscriptionId: id,
            timestamp: Math.floor(Date.now() / 1000),
            body,
          });
          const response = await request(`${base}/${s}`, {
            method: "POST",
            headers: { "content-type": "application/json", ...headers },
            body,
            dispatcher: agent,
          });
          await response.body.dump();
        }
      }),
    );
  } finally {
    await agent.close();
  }
}
