// The README's and examples/README.md's shell blocks (```sh, ```bash, ```console) run as written,
// in the order they appear, each line through bash. Until the packages are published, the
// published names are replaced by the workspace's, as the README tells a reader with a clone:
// - `npx doorbell …` and `npx @doorbell/cli …` run this workspace's CLI from its sources;
// - `npm install @doorbell/…` is skipped (the workspace already links every package), and so are
//   `npm ci`, `npm run build` (the workspace is installed; the CLI runs from its sources) and
//   `npm test` (it is this suite);
// - the README's ports are swapped for free ones (a server that takes its port by default gets
//   `--port`, the example client `--url`), `/tmp/watched` for a temporary folder, and the tour's
//   `ic_…` for the intentCode of an intent published on the README's own holder.
// Long-running commands (serve, forwarder, agent watch, the examples' servers and client) are
// started, waited on for their ready line and stopped at the end; one server serves every block
// that names it (the README's two spellings of `serve` are one holder). Every other command must
// exit 0.
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, expect, it } from "vitest";
import { freePort } from "./command-harness.js";

const ROOT = path.join(import.meta.dirname, "../../..");
const ENTRY = path.join(import.meta.dirname, "cli-entry.ts");

interface Block {
  file: string;
  line: number;
  commands: string[];
}

/** The fenced shell blocks of a markdown file, each as its commands (continuations joined). */
export function shellBlocks(file: string): Block[] {
  const lines = fs.readFileSync(path.join(ROOT, file), "utf8").split("\n");
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^\s*```(sh|bash|console)\s*$/.exec(lines[i] as string);
    if (fence === null) continue;
    const start = i + 1;
    const body: string[] = [];
    for (i++; i < lines.length && !/^\s*```\s*$/.test(lines[i] as string); i++) body.push(lines[i] as string);
    const joined = body.join("\n").replace(/\\\n\s*/g, "");
    const commands = joined
      .split("\n")
      .map((text) => text.trim())
      .filter((text) =>
        fence[1] === "console" ? text.startsWith("$ ") : text !== "" && !text.startsWith("#"),
      )
      .map((text) => text.replace(/^\$ /, ""));
    blocks.push({ file, line: start, commands });
  }
  return blocks;
}

/** Setup steps a clone has already taken, and the suite itself: not run again here. */
const SKIPPED = [/^npm ci$/, /^npm run build$/, /^npm test$/, /^npm install @doorbell\//];

/** A long-running command: how to tell it is ready, and the port it takes unless told. */
const LONG_RUNNING: { match: RegExp; ready: RegExp; defaultPort?: number; url?: number }[] = [
  { match: /^doorbell serve\b/, ready: /MCP endpoint\s+http/, defaultPort: 8080 },
  { match: /^doorbell forwarder\b/, ready: /MCP endpoint\s+http/, defaultPort: 8090 },
  { match: /\bdoorbell agent watch\b/, ready: /^doorbells: waiting for /m },
  { match: /events-check-function\/server\.ts/, ready: /MCP Events example/, defaultPort: 8766 },
  { match: /events-mcp-handler\/server\.ts/, ready: /MCP Events example \(mcp-handler\)/, defaultPort: 8767 },
  { match: /events-folder-watcher\/server\.ts/, ready: /MCP Events endpoint http/, defaultPort: 8765 },
  { match: /events-client\/print\.ts/, ready: /subscribed by (poll|push|webhook)/, url: 8765 },
];

const ports = new Map<number, number>();
async function portFor(readmePort: number): Promise<number> {
  let port = ports.get(readmePort);
  if (port === undefined) {
    port = await freePort();
    ports.set(readmePort, port);
  }
  return port;
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-readme-"));
const watched = path.join(work, "watched");
const substitutions = new Map<string, string>();

/** The command as this test runs it (see the header), or undefined when it is skipped. */
async function asRun(command: string): Promise<string | undefined> {
  const [code = "", comment] = command.split(/\s+#\s/, 2);
  const steps = code
    .split(" && ")
    .map((step) => step.trim().replace(/\bnpx (@doorbell\/cli|doorbell) /g, "doorbell "))
    .filter((step) => !SKIPPED.some((skip) => skip.test(step)));
  if (steps.length === 0) return undefined;
  let text = steps.join(" && ");
  for (const [readmePort] of text.matchAll(/(?<=127\.0\.0\.1:)\d{4,5}/g)) {
    text = text.replaceAll(`127.0.0.1:${readmePort}`, `127.0.0.1:${await portFor(Number(readmePort))}`);
  }
  const long = LONG_RUNNING.find((entry) => entry.match.test(steps.at(-1) as string));
  if (long?.defaultPort !== undefined && !/--port\b/.test(text))
    text += ` --port ${await portFor(long.defaultPort)}`;
  if (long?.url !== undefined && !/--url\b/.test(text))
    text += ` --url http://127.0.0.1:${await portFor(long.url)}/mcp`;
  text = text.replaceAll("/tmp/watched", watched);
  for (const [from, to] of substitutions) text = text.replaceAll(from, to);
  return comment === undefined ? text : `${text} # ${comment}`;
}

// tsx by its path: a command may run outside the repository, where `--import tsx` finds nothing.
const TSX = pathToFileURL(path.join(ROOT, "node_modules/tsx/dist/loader.mjs")).href;
const PRELUDE = `doorbell() { "${process.execPath}" --import ${TSX} --conditions=@doorbell/source "${ENTRY}" "$@"; }\n`;

interface Running {
  command: string;
  child: ChildProcess;
  out: () => string;
  exited: Promise<number | null>;
}
const running: Running[] = [];

/** Runs through bash in its own process group (stopped as a whole): in the repository when it names a path there. */
function start(command: string): Running {
  const cwd = /\b(examples|packages)\//.test(command) ? ROOT : work;
  const child = spawn("bash", ["-c", PRELUDE + command], {
    cwd,
    detached: true,
    env: { ...process.env, DOORBELL_LOG_LEVEL: "warn" },
  });
  let out = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    out += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { command, child, out: () => out, exited };
}

async function readyOrFail(process: Running, ready: RegExp, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ready.test(process.out())) {
    if (process.child.exitCode !== null)
      throw new Error(`${process.command}\nexited with ${process.child.exitCode}:\n${process.out()}`);
    if (Date.now() > deadline)
      throw new Error(`${process.command}\nnever printed ${ready}:\n${process.out()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The README's tour publishes an intent before `agent watch`: this one, on the README's holder. */
async function publishOnHolder(port: number): Promise<string> {
  const client = new Client({ name: "readme", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
  try {
    const result = await client.callTool({
      name: "intent_publish_intent",
      arguments: {
        statement: "A Škoda Octavia combi, diesel, near Bratislava",
        criteria: { category: "vehicles", make: "Škoda", model: "Octavia", fuel: "diesel" },
        area: { country: "SK", region: "SK-BL" },
        budget: { amount: 20000, currency: "EUR" },
      },
    });
    return (result.structuredContent as { intentCode: string }).intentCode;
  } finally {
    await client.close();
  }
}

afterAll(async () => {
  for (const process of running) {
    if (process.child.exitCode === null && process.child.pid !== undefined) {
      try {
        globalThis.process.kill(-process.child.pid, "SIGTERM");
      } catch {} // already gone
    }
  }
  await Promise.all(running.map((process) => process.exited));
  fs.rmSync(work, { recursive: true, force: true });
});

it("runs every shell block of README.md and examples/README.md as written", async () => {
  const blocks = [...shellBlocks("README.md"), ...shellBlocks("examples/README.md")];
  expect(blocks.length).toBeGreaterThan(8);
  // Commands run side by side; one that names a server's port waits for that server's ready line.
  const readyOn = new Map<number, Promise<void>>();
  const servers = new Set<string>();
  const finished: Promise<void>[] = [];
  const serversNamedBy = (command: string) =>
    [...command.matchAll(/127\.0\.0\.1:(\d+)/g)].map((m) => readyOn.get(Number(m[1]))).filter(Boolean);
  for (const block of blocks) {
    for (const written of block.commands) {
      if (written.includes("ic_…") && !substitutions.has("ic_…")) {
        const holderPort = await portFor(8080);
        await readyOn.get(holderPort);
        substitutions.set("ic_…", await publishOnHolder(holderPort));
      }
      const command = await asRun(written);
      if (command === undefined) continue;
      const where = `${block.file}:${block.line}: ${written}\nran as: ${command}`;
      const long = LONG_RUNNING.find((entry) => entry.match.test(command.replace(/^.*&& /, "")));
      const key = command.split(/\s+#\s/)[0] as string;
      if (long !== undefined && servers.has(key)) continue;
      servers.add(key);
      const before = serversNamedBy(command);
      const ownPort = long === undefined ? undefined : /--port (\d+)/.exec(command)?.[1];
      const run = (async () => {
        await Promise.all(before);
        const process = start(command);
        running.push(process);
        if (long !== undefined) {
          await readyOrFail(process, long.ready).catch((error: Error) => {
            throw new Error(`${where}\n${error.message}`);
          });
          return;
        }
        const code = await process.exited;
        expect(code, `${where}\n${process.out()}`).toBe(0);
      })();
      if (ownPort !== undefined) readyOn.set(Number(ownPort), run);
      finished.push(run);
      // A rejection is reported by Promise.all below, not as an unhandled one meanwhile.
      run.catch(() => {});
    }
  }
  await Promise.all(finished);
}, 120_000);
