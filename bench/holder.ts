import { randomUUID } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import {
  createHolder,
  createMcpHandler,
  type DemandGrid,
  type HolderToolServices,
  isLocalMailbox,
  scopedSignalFetch,
} from "@doorbell/holder";
import { serve } from "@hono/node-server";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { createMcpHandler as createSdkHandler, McpServer as McpServerV2 } from "@modelcontextprotocol/server";
import { Hono } from "hono";
import { pino } from "pino";
import { z } from "zod";
import { type Measurement, printComparison } from "./harness.js";

// Empty intent_list_matches round trips per second over Streamable HTTP (one client, one session,
// sequential calls, loopback), beside a bare SDK server on the same transport (Hono +
// @hono/node-server + WebStandardStreamableHTTPServerTransport, session mode) whose one tool returns
// a constant. Ours does the real work: Host/Origin check, body parse, params check, strict input
// schema, rate limiter, intentCode → keyed-hash lookup, the since query, output schema. SQLite
// file (WAL, synchronous=FULL) under a temp dir; the intent is active and has no matches.

const ROUNDS = 7;
const ROUND_MS = 1_000;
const WARMUP_CALLS = 300;

export async function benchHolder(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-bench-holder-"));
  const holder = await createHolder({
    dataDir: dir,
    log: pino({ level: "silent" }),
    env: {},
    mcp: { toolRateLimit: false, sessionRateLimit: false },
  });
  const bare = await startBareServer();
  const stubbed = await startStubbedHolderMcp(holder.services.demand.grid());
  try {
    const { url } = await holder.listen(0, "127.0.0.1");
    const ours = await connect(new URL(`${url}/mcp`));
    const published = (
      await ours.callTool({
        name: "intent_publish_intent",
        arguments: {
          statement: "A Škoda Octavia combi, diesel",
          area: { country: "SK" },
          budget: { amount: 15000, currency: "EUR" },
        },
      })
    ).structuredContent as { intentCode: string; consentUrl: string };
    await confirm(holder, published.consentUrl);
    const since = new Date().toISOString();
    const oursCall = async () => {
      const result = await ours.callTool({
        name: "intent_list_matches",
        arguments: { intentCode: published.intentCode, since },
      });
      if (result.isError || (result.structuredContent as { matches: unknown[] }).matches.length !== 0) {
        throw new Error("intent_list_matches did not answer an empty list");
      }
    };
    const baseline = await connect(bare.url);
    const bareCall = async () => {
      const result = await baseline.callTool({ name: "constant", arguments: { intentCode: "x", since } });
      if (result.isError) throw new Error("the bare tool failed");
    };

    console.log(
      `Node ${process.version}; one SDK Client per server, one session, sequential tools/call over loopback; ` +
        `${ROUNDS} interleaved rounds of ${ROUND_MS} ms, median.`,
    );
    const layer = await connect(stubbed.url);
    const layerCall = async () => {
      const result = await layer.callTool({
        name: "intent_list_matches",
        arguments: { intentCode: "ic_bench", since },
      });
      if (result.isError) throw new Error("the stubbed holder refused");
    };
    await benchModern(new URL(`${url}/mcp`), published.intentCode, since);

    console.log("\nThe 2025-11-25 (legacy, sessionful) path, through the 1.x SDK client:");
    const [oursRate, bareRate, layerRate] = await compareAsync([
      ["holder intent_list_matches (empty, SQLite)", oursCall],
      ["bare SDK server, constant tool", bareCall],
      ["holder MCP layer, services stubbed", layerCall],
    ]);
    printComparison("Empty intent_list_matches round trips per second (goal ≥ 0.8× the bare server)", [
      oursRate as Measurement,
      bareRate as Measurement,
    ]);
    printComparison("The MCP layer alone (same handler, in-memory services answering at once)", [
      layerRate as Measurement,
      bareRate as Measurement,
    ]);
    // CPU per round trip (client and server share this process): steadier than rates on a busy machine.
    console.log("");
    for (const row of [oursRate, bareRate, layerRate] as CpuMeasurement[]) {
      console.log(
        `  ${row.name.padEnd(44)} ${Math.round(row.cpuMicrosPerOp).toLocaleString("en-US").padStart(6)} µs CPU per round trip (median)`,
      );
    }
    await ours.close();
    await baseline.close();
    await layer.close();
  } finally {
    await holder.close();
    await bare.close();
    await stubbed.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function connect(url: URL): Promise<Client> {
  const client = new Client({ name: "bench", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(url, { fetch: scopedSignalFetch() }));
  return client;
}

/** The person's side: consent on the page and the double opt-in click, through the services. */
async function confirm(holder: Awaited<ReturnType<typeof createHolder>>, consentUrl: string): Promise<void> {
  const token = consentUrl.slice(consentUrl.lastIndexOf("/") + 1);
  await holder.services.consent.giveConsent(token, { email: "bench@example.sk", accepted: true });
  const mailer = holder.context.mailer;
  if (!isLocalMailbox(mailer)) throw new Error("the bench expects the local mailbox");
  const [mail] = await mailer.listMailbox({ to: "bench@example.sk", limit: 1 });
  const confirmToken = mail === undefined ? undefined : /\/confirm\/([0-9A-Za-z]+)/.exec(mail.text)?.[1];
  if (confirmToken === undefined) throw new Error("no confirmation mail");
  await holder.services.consent.confirmEmail(confirmToken);
}

/** A bare SDK server: session mode, one tool returning a constant, on the same transport stack. */
async function startBareServer(): Promise<{ url: URL; close(): Promise<void> }> {
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const app = new Hono();
  app.all("/mcp", async (c) => {
    const id = c.req.header("mcp-session-id");
    const existing = id === undefined ? undefined : sessions.get(id);
    if (existing !== undefined) return existing.handleRequest(c.req.raw);
    const server = new McpServer({ name: "bare", version: "1.0.0" });
    server.registerTool(
      "constant",
      {
        description: "returns a constant",
        inputSchema: { intentCode: z.string(), since: z.string().optional() },
      },
      async () => ({
        content: [{ type: "text", text: '{"matches":[]}' }],
        structuredContent: { matches: [] },
      }),
    );
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => {
        sessions.set(sessionId, transport);
      },
    });
    await server.connect(transport);
    return transport.handleRequest(c.req.raw);
  });
  const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    close: async () => {
      await Promise.all([...sessions.values()].map((transport) => transport.close()));
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        (server as { closeAllConnections?: () => void }).closeAllConnections?.();
      });
    },
  };
}

interface CpuMeasurement extends Measurement {
  cpuMicrosPerOp: number;
}

const median = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

/** The holder's own MCP handler on the same Hono + node-server stack, with services that answer at once. */
async function startStubbedHolderMcp(grid: DemandGrid): Promise<{ url: URL; close(): Promise<void> }> {
  const refuse = async (): Promise<never> => {
    throw new Error("not used by the bench");
  };
  const services: HolderToolServices = {
    intents: {
      publish: refuse,
      principalForCode: async () => ({ kind: "intent-code", intentId: "int_bench" }),
      get: refuse,
      readableIntent: refuse,
      update: refuse,
      withdraw: refuse,
      offerRenewal: refuse,
      expireDue: async () => 0,
    },
    matches: { listMatches: async () => ({ matches: [] }) },
    offers: { importCatalogue: refuse, submitReply: refuse, search: refuse },
    demand: { grid: () => grid, summary: refuse },
  };
  const mcp = createMcpHandler(services, {
    publicUrl: "http://127.0.0.1",
    toolRateLimit: false,
    sessionRateLimit: false,
  });
  const app = new Hono();
  app.all("/mcp", (c) => mcp(c.req.raw));
  const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    close: async () => {
      await mcp.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        (server as { closeAllConnections?: () => void }).closeAllConnections?.();
      });
    },
  };
}

/** Like harness.compare, for async operations: warm up, then interleaved timed rounds, medians. */
async function compareAsync(
  candidates: readonly (readonly [string, () => Promise<void>])[],
): Promise<CpuMeasurement[]> {
  for (const [, fn] of candidates) for (let i = 0; i < WARMUP_CALLS; i++) await fn();
  const rates: number[][] = candidates.map(() => []);
  const cpu: number[][] = candidates.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [index, [, fn]] of candidates.entries()) {
      let ops = 0;
      const cpuStart = process.cpuUsage();
      const start = process.hrtime.bigint();
      let elapsed = 0;
      while (elapsed < ROUND_MS * 1e6) {
        await fn();
        ops += 1;
        elapsed = Number(process.hrtime.bigint() - start);
      }
      const used = process.cpuUsage(cpuStart);
      rates[index]?.push((ops / elapsed) * 1e9);
      cpu[index]?.push((used.user + used.system) / ops);
    }
  }
  return candidates.map(([name], index) => ({
    name,
    opsPerSecond: median(rates[index] as number[]),
    cpuMicrosPerOp: median(cpu[index] as number[]),
  }));
}

// ---------------------------------------------------------------------------------------------
// The 2026-07-28 path: the same raw POST (keep-alive fetch, one request at a time) to three
// servers — the holder (a fresh server per request, the real intent_list_matches), a bare v2 SDK
// stateless server (createMcpHandler, one constant tool), and a raw node:http loop that reads the
// body and answers the bytes the holder answers. The first ratio is the SDK's share, the second
// what the protocol layer costs beside the HTTP work.

const MODERN_META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
};

function modernCall(url: URL, name: string, args: Record<string, unknown>): () => Promise<string> {
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { _meta: MODERN_META, name, arguments: args },
  });
  const headers = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "tools/call",
    "mcp-name": name,
  };
  return async () => {
    const response = await fetch(url, { method: "POST", headers, body });
    const text = await response.text();
    if (response.status !== 200)
      throw new Error(`${name} answered ${response.status}: ${text.slice(0, 200)}`);
    return text;
  };
}

async function benchModern(holderUrl: URL, intentCode: string, since: string): Promise<void> {
  const ours = modernCall(holderUrl, "intent_list_matches", { intentCode, since });
  const answer = await ours();
  if (!answer.includes('"matches":[]')) throw new Error("intent_list_matches did not answer an empty list");
  const bare = await startBareModernServer();
  const raw = await startRawLoop(answer);
  try {
    const bareCall = modernCall(bare.url, "constant", { intentCode, since });
    const rawCall = modernCall(raw.url, "intent_list_matches", { intentCode, since });
    console.log("\nThe 2026-07-28 path (stateless), raw keep-alive POSTs, one at a time:");
    const [oursRate, bareRate, rawRate] = await compareAsync([
      ["holder intent_list_matches (empty, SQLite)", async () => void (await ours())],
      ["bare v2 SDK stateless server, constant tool", async () => void (await bareCall())],
      ["raw node:http JSON-RPC loop, same bytes", async () => void (await rawCall())],
    ]);
    printComparison("Modern empty intent_list_matches vs the bare v2 SDK server (goal ≥ 1.0×)", [
      oursRate as Measurement,
      bareRate as Measurement,
    ]);
    printComparison("Modern empty intent_list_matches vs a raw node:http loop (goal ≥ 0.3×)", [
      oursRate as Measurement,
      rawRate as Measurement,
    ]);
  } finally {
    await bare.close();
    await raw.close();
  }
}

async function listen(server: http.Server): Promise<URL> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return new URL(`http://127.0.0.1:${port}/mcp`);
}

async function stop(server: http.Server): Promise<void> {
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** A bare v2 SDK stateless server with one constant tool, on the same Hono + node-server stack. */
async function startBareModernServer(): Promise<{ url: URL; close(): Promise<void> }> {
  const handler = createSdkHandler(
    () => {
      const server = new McpServerV2({ name: "bare", version: "1.0.0" });
      server.registerTool(
        "constant",
        {
          description: "returns a constant",
          inputSchema: z.object({ intentCode: z.string(), since: z.string().optional() }),
        },
        async () => ({
          content: [{ type: "text", text: '{"matches":[]}' }],
          structuredContent: { matches: [] },
        }),
      );
      return server;
    },
    { legacy: "reject" },
  );
  const app = new Hono();
  app.all("/mcp", (c) => handler.fetch(c.req.raw));
  const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }) as http.Server;
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    close: async () => {
      await handler.close();
      await stop(server);
    },
  };
}

/** node:http reading each body whole and answering the holder's own bytes: the HTTP work alone. */
async function startRawLoop(answer: string): Promise<{ url: URL; close(): Promise<void> }> {
  const bytes = Buffer.from(answer);
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      JSON.parse(Buffer.concat(chunks).toString("utf8"));
      response.writeHead(200, { "content-type": "application/json", "content-length": bytes.length });
      response.end(bytes);
    });
  });
  const url = await listen(server);
  return { url, close: () => stop(server) };
}
