/**
 * The cheap pull as shipped: `doorbell serve` started as its own process with its defaults (the
 * built CLI, shared limits, access log, admission), an active intent with no new matches, and one
 * undici client (one keep-alive connection, sequential) sending the exact bytes an SDK v2 client
 * sends for `intent_list_matches` on MCP 2026-07-28. Beside it, in their own processes and driven
 * by the same client with the same bytes: a raw node:http server answering the holder's own
 * response bytes, and a raw node:http server that makes the same one-row read (the intent by its
 * code's keyed hash) on the same engine before answering.
 *
 * Printed per server: pulls per second, server CPU per pull (from /proc), and ours against each
 * baseline. `npm run bench -- serve` (SQLite); with DOORBELL_TEST_PG_URL set, PostgreSQL too.
 * Node refuses --cpu-prof in NODE_OPTIONS: DOORBELL_PROFILE_DIR writes a CPU profile of serve.
 *
 * The one default changed is the tool-call limit (300 a minute per address): a bench from one
 * address would be refused after its first 300 calls. It is raised, not turned off, so every call
 * is still counted the way a shipped holder counts it.
 */
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { freePort } from "@doorbell/store/testing";
import { Client as McpClient, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Client as HttpClient } from "undici";
import { newPostgresDatabase } from "./harness.js";
import { processCpuSeconds } from "./process-cpu.js";

const ROUNDS = 5;
const ROUND_MS = 2_000;
const WARMUP_CALLS = 500;
const ROOT = path.join(import.meta.dirname, "..");
const CLI = path.join(ROOT, "packages", "cli", "bin", "doorbell.js");

interface Server {
  name: string;
  origin: string;
  child: ChildProcess;
}

/** One recorded request: what the SDK sent, replayed byte for byte. */
interface Recorded {
  path: string;
  headers: Record<string, string>;
  body: string;
  answer: string;
}

export async function benchServe(): Promise<void> {
  const pg = process.env.DOORBELL_TEST_PG_URL;
  console.log(
    `Node ${process.version}, ${os.cpus().length} cores; each server its own process; one undici client, ` +
      `one keep-alive connection, sequential; ${ROUNDS} interleaved rounds of ${ROUND_MS} ms, median.`,
  );
  await benchEngine("SQLite", undefined);
  if (pg === undefined) return;
  const database = await newPostgresDatabase(pg, `doorbell_bench_serve_${process.pid}`);
  try {
    await benchEngine("PostgreSQL", database.url);
  } finally {
    await database.drop();
  }
}

async function benchEngine(label: string, database: string | undefined): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-bench-serve-"));
  const servers: Server[] = [];
  try {
    const holder = await startServe(dir, database);
    servers.push(holder);
    const pull = await preparePull(holder);
    // The demo catalogue's import and indexing run on after the first answers: measured pulls
    // must not pay for them.
    await settled(holder.child.pid);
    const constant = await startRaw("raw node:http, the same answer", { answer: pull.answer });
    servers.push(constant);
    const read = await startRaw("raw node:http + the same one-row read", {
      answer: pull.answer,
      read: database ?? path.join(dir, "holder.sqlite"),
      hash: pull.codeHash,
    });
    servers.push(read);

    const clients = servers.map((server) => new HttpClient(server.origin, { pipelining: 1 }));
    const once = (index: number) => send(clients[index] as HttpClient, pull.request);
    for (let index = 0; index < servers.length; index++) {
      for (let i = 0; i < WARMUP_CALLS; i++) await once(index);
    }
    const rates = servers.map(() => [] as number[]);
    const cpus = servers.map(() => [] as number[]);
    for (let round = 0; round < ROUNDS; round++) {
      for (const [index, server] of servers.entries()) {
        const cpuBefore = cpuMicros(server.child.pid);
        const started = process.hrtime.bigint();
        let calls = 0;
        while (Number(process.hrtime.bigint() - started) < ROUND_MS * 1e6) {
          await once(index);
          calls++;
        }
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        rates[index]?.push(calls / seconds);
        cpus[index]?.push((cpuMicros(server.child.pid) - cpuBefore) / calls);
      }
    }
    console.log(`\n${label}: empty intent_list_matches (MCP 2026-07-28) as shipped`);
    const width = Math.max(...servers.map((server) => server.name.length));
    const ours = median(rates[0] as number[]);
    for (const [index, server] of servers.entries()) {
      const rate = median(rates[index] as number[]);
      const ratio = index === 0 ? "" : `   ours ${(ours / rate).toFixed(2)}×`;
      console.log(
        `  ${server.name.padEnd(width)}  ${Math.round(rate).toLocaleString("en-US").padStart(7)} pulls/s` +
          `  ${Math.round(median(cpus[index] as number[]))
            .toLocaleString("en-US")
            .padStart(6)} µs server CPU each${ratio}`,
      );
    }
    await Promise.all(clients.map((client) => client.close()));
  } finally {
    await Promise.all(servers.map(stop));
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// ---- the servers -------------------------------------------------------------------------------

async function startServe(dir: string, database: string | undefined): Promise<Server> {
  const port = await freePort();
  const profile = process.env.DOORBELL_PROFILE_DIR;
  const child = spawn(
    process.execPath,
    [
      ...(profile ? ["--cpu-prof", `--cpu-prof-dir=${profile}`, "--cpu-prof-name=serve.cpuprofile"] : []),
      CLI,
      "serve",
      "--port",
      String(port),
      "--data-dir",
      dir,
      "--limit",
      "mcp.tool=100000000/60",
      ...(database === undefined ? [] : ["--database", database]),
      // A variant to compare by hand, e.g. BENCH_SERVE_ARGS="--no-demo".
      ...(process.env.BENCH_SERVE_ARGS ?? "").split(" ").filter((arg) => arg !== ""),
    ],
    // The access log is on, as shipped; it goes to a file rather than this terminal.
    { stdio: ["ignore", "pipe", fs.openSync(path.join(dir, "serve.log"), "w")], env: { ...process.env } },
  );
  const out = await readyLine(child, /MCP endpoint\s+(\S+)/);
  const mailbox = /Mailbox\s+(\S+)/.exec(out.text)?.[1];
  return { name: "doorbell serve (defaults)", origin: `http://127.0.0.1:${port}`, child, ...{ mailbox } };
}

/** A raw node:http JSON-RPC server in its own process, answering `answer` (after one read). */
async function startRaw(
  name: string,
  options: { answer: string; read?: string; hash?: string },
): Promise<Server> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    ["--import", "tsx", path.join(import.meta.dirname, "serve-raw.ts"), String(port)],
    { stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, RAW_OPTIONS: JSON.stringify(options) } },
  );
  await readyLine(child, /listening/);
  return { name, origin: `http://127.0.0.1:${port}`, child };
}

async function stop(server: Server): Promise<void> {
  if (server.child.exitCode !== null) return;
  const exited = new Promise((resolve) => server.child.once("exit", resolve));
  server.child.kill("SIGTERM");
  await exited;
}

// ---- the pull ----------------------------------------------------------------------------------

/**
 * Publishes an intent through the SDK v2 client, consents and confirms on the pages as the person
 * would, then records the exact request the SDK sends for an empty pull and the holder's answer.
 */
async function preparePull(holder: Server & { mailbox?: string }) {
  const mcpUrl = new URL(`${holder.origin}/mcp`);
  const client = new McpClient({ name: "bench", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
  const recorded: { request?: Omit<Recorded, "answer">; answer?: string } = {};
  const recording: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    const body = typeof init?.body === "string" ? init.body : undefined;
    if (body?.includes('"intent_list_matches"')) {
      recorded.request = {
        path: new URL(String(input)).pathname,
        headers: headersOf(new Headers(init?.headers)),
        body,
      };
      recorded.answer = await response.clone().text();
    }
    return response;
  };
  await client.connect(new StreamableHTTPClientTransport(mcpUrl, { fetch: recording }));
  const published = (
    await client.callTool({
      name: "intent_publish_intent",
      arguments: { statement: "A rowing boat for two", area: { country: "SK" } },
    })
  ).structuredContent as { intentCode: string; consentUrl: string };
  await consentAndConfirm(holder, published.consentUrl);
  const since = new Date().toISOString();
  const result = await client.callTool({
    name: "intent_list_matches",
    arguments: { intentCode: published.intentCode, since },
  });
  if (result.isError || (result.structuredContent as { matches: unknown[] }).matches.length !== 0)
    throw new Error(`the pull did not answer an empty list: ${JSON.stringify(result)}`);
  await client.close();
  if (recorded.request === undefined || recorded.answer === undefined) throw new Error("no pull recorded");
  if (process.env.BENCH_SHOW_REQUEST) console.log(recorded);
  const { createHash } = await import("node:crypto");
  return {
    request: recorded.request,
    answer: recorded.answer,
    // Only its length matters to the raw read: it looks up a row by a key of the same shape.
    codeHash: createHash("sha256").update(published.intentCode).digest("base64url"),
  };
}

async function consentAndConfirm(holder: Server & { mailbox?: string }, consentUrl: string): Promise<void> {
  const email = "bench@example.sk";
  await submit(consentUrl, { email, consent: "yes" });
  if (holder.mailbox === undefined) throw new Error("serve printed no mailbox");
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const list = await (await fetch(holder.mailbox)).text();
    const confirm = /https?:\/\/[^"<\s]+\/confirm\/[0-9A-Za-z]+/.exec(list)?.[0];
    const mail = /href="([^"]*\/dev\/mailbox\/[^"]+)"/.exec(list)?.[1];
    const link =
      confirm ??
      (mail === undefined
        ? undefined
        : /https?:\/\/[^"<\s]+\/confirm\/[0-9A-Za-z]+/.exec(
            await (await fetch(new URL(mail, holder.mailbox))).text(),
          )?.[0]);
    if (link !== undefined) {
      await submit(link.replaceAll("&amp;", "&"), {});
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error("no confirmation mail in the local mailbox");
}

/** GETs a form page and posts `fields` with its csrf token, as a same-origin page would. */
async function submit(page: string, fields: Record<string, string>): Promise<void> {
  const form = await fetch(page);
  const cookie = form.headers
    .getSetCookie()
    .map((line) => line.split(";")[0])
    .join("; ");
  const html = await form.text();
  const hidden = (name: string) =>
    new RegExp(`<input[^>]*name="${name}"[^>]*value="([^"]*)"`).exec(html)?.[1] ??
    new RegExp(`<input[^>]*value="([^"]*)"[^>]*name="${name}"`).exec(html)?.[1];
  const body = new URLSearchParams({ csrf: hidden("csrf") ?? "", ...fields });
  const version = hidden("consentVersion");
  if (version !== undefined) body.set("consentVersion", version);
  const answer = await fetch(page, {
    method: "POST",
    redirect: "manual",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      origin: "null",
      "sec-fetch-site": "same-origin",
      ...(cookie === "" ? {} : { cookie }),
    },
    body: body.toString(),
  });
  if (answer.status >= 400) throw new Error(`${page} answered ${answer.status}: ${await answer.text()}`);
}

function headersOf(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, name) => {
    out[name] = value;
  });
  return out;
}

async function send(client: HttpClient, request: Omit<Recorded, "answer">): Promise<void> {
  const response = await client.request({
    method: "POST",
    path: request.path,
    headers: request.headers,
    body: request.body,
  });
  const text = await response.body.text();
  if (response.statusCode !== 200 || !text.includes('"matches":[]'))
    throw new Error(`a pull answered ${response.statusCode}: ${text.slice(0, 300)}`);
}

// ---- measuring ---------------------------------------------------------------------------------

/** User + system CPU of process `pid` in microseconds (Linux /proc). */
const cpuMicros = (pid: number | undefined): number => processCpuSeconds(pid) * 1e6;

/** Waits until process `pid` uses under 5 % of a core for half a second (at most a minute). */
async function settled(pid: number | undefined): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const before = cpuMicros(pid);
    await new Promise((resolve) => setTimeout(resolve, 500));
    if (cpuMicros(pid) - before < 25_000) return;
  }
  console.log("  (serve was still busy after a minute; measuring anyway)");
}

const median = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

async function readyLine(child: ChildProcess, line: RegExp): Promise<{ text: string }> {
  const out = { text: "" };
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not ready in 120 s:\n${out.text}`)), 120_000);
    child.stdout?.on("data", (chunk: Buffer) => {
      out.text += chunk.toString();
      if (line.test(out.text) && /Mailbox|listening/.test(out.text)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once("exit", (code) => reject(new Error(`exited with ${code} before it was ready:\n${out.text}`)));
  });
  return out;
}
