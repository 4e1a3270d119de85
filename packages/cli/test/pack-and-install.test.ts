// Publishable packages: every workspace package is built and packed as `npm publish` would, the
// tarballs are installed into a temporary project outside the workspace (dependencies from the
// registry, install scripts run), each package is imported there, SQLite opens through
// @doorbell/store, and `npx doorbell --version` answers. Then, in that project, the five-minute
// snippets of the READMEs run as written: read from the README files themselves (an edit there is
// what runs here), each as a real process with the plain `node` of this run (see README SNIPPETS).
//
// better-sqlite3's install script (prebuild-install) is offered, as a local prebuild, the addon the
// workspace's own `npm ci` compiled for this Node: compiling the same sqlite3.c again took a minute
// of CPU and proved nothing about Doorbell. prebuild-install loads the addon before it accepts it;
// a different better-sqlite3 version, ABI or platform finds no prebuild and compiles as before.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { EventsClient } from "@doorbell/mcp-events";
import { freePort } from "@doorbell/store/testing";
import {
  type CallToolResult,
  Client,
  StreamableHTTPClientTransport,
  type Transport,
} from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, describe, expect, it } from "vitest";
import { Browser } from "./cluster-harness.js";

const exec = promisify(execFile);
const ROOT = join(import.meta.dirname, "../../..");
const PACKAGES = readdirSync(join(ROOT, "packages")).sort();
const manifest = (dir: string) =>
  JSON.parse(readFileSync(join(ROOT, "packages", dir, "package.json"), "utf8")) as {
    name: string;
    version: string;
  };

/** The environment without what `npm test` adds (npm_config_*…), so the inner npm sees no workspace. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^npm_/i.test(name) && name !== "INIT_CWD") env[name] = value;
  }
  return env;
}

const run = (command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) =>
  exec(command, args, {
    cwd,
    env: { ...cleanEnv(), ...env },
    maxBuffer: 64 * 1024 * 1024,
    timeout: 20 * 60_000,
  });

/**
 * A folder holding the workspace's compiled better-sqlite3 addon as the tarball prebuild-install
 * looks for ({name}-v{version}-{runtime}-v{abi}-{platform}{libc}-{arch}.tar.gz, glibc's libc empty).
 */
async function localPrebuilds(dir: string): Promise<string> {
  const addon = join(ROOT, "node_modules", "better-sqlite3");
  const { version } = JSON.parse(readFileSync(join(addon, "package.json"), "utf8")) as { version: string };
  const { platform, arch } = process;
  mkdirSync(dir);
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${platform}-${arch}.tar.gz`;
  await exec("tar", ["-czf", join(dir, name), "-C", addon, "build/Release/better_sqlite3.node"]);
  return dir;
}

// ---- README SNIPPETS ---------------------------------------------------------------------------
// The sections run, as a reader runs them: the blocks of a section are one file in the installed
// project; ```text after them is what it prints (each line, in any order: the agent's lines come
// from different hooks). The README's ports become free ones. TypeScript runs with Node's own type
// stripping where this Node has it (24), else through tsx from the registry (20 has none).

interface Block {
  lang: string;
  /** The `###` heading the block is under ("" before the first). */
  heading: string;
  code: string;
}

/** The fenced blocks of the section of `file` whose `## ` heading starts with `section`. */
function readmeBlocks(file: string, section: string): Block[] {
  const lines = readFileSync(join(ROOT, file), "utf8").split("\n");
  const start = lines.findIndex((line) => line.startsWith(`## ${section}`));
  if (start < 0) throw new Error(`${file} has no section "## ${section}"`);
  const blocks: Block[] = [];
  let heading = "";
  for (let i = start + 1; i < lines.length && !(lines[i] as string).startsWith("## "); i++) {
    const line = lines[i] as string;
    if (line.startsWith("### ")) heading = line.slice(4);
    const fence = /^```(\w+)$/.exec(line);
    if (fence === null) continue;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i] !== "```"; i++) body.push(lines[i] as string);
    blocks.push({ lang: fence[1] as string, heading, code: body.join("\n") });
  }
  return blocks;
}

/** Read when used, so that a README being edited is read as it is then. */
const sections = () => ({
  webhooks: readmeBlocks("packages/webhooks/README.md", "Example"),
  agent: readmeBlocks("packages/agent/README.md", "Example"),
  events: readmeBlocks("packages/mcp-events/README.md", "Five minutes"),
  // The mcp-events README's "On Vercel mcp-handler" points here for its five minutes.
  mcpHandler: readmeBlocks("examples/events-mcp-handler/README.md", "Add it to your server"),
});
const typescript = (blocks: Block[]) =>
  blocks
    .filter((block) => block.lang === "ts")
    .map((block) => block.code)
    .join("\n");
const printed = (blocks: Block[]) =>
  blocks
    .filter((block) => block.lang === "text")
    .flatMap((block) => block.code.split("\n"))
    .filter((line) => line !== "");

/**
 * The registry packages the sections' `npm install` lines name (the @doorbell ones are the
 * tarballs), at the version the workspace is tested with when it has one.
 */
function readmeInstalls(): string[] {
  const names = Object.values(sections())
    .flat()
    .filter((block) => block.lang === "sh")
    .flatMap((block) => block.code.replace(/\\\n/g, " ").split("\n"))
    .map((line) => /^npm install (.+)$/.exec(line.trim())?.[1] ?? "")
    .flatMap((names) => names.split(/\s+/))
    .filter((name) => name !== "" && !name.startsWith("@doorbell/"));
  return [...new Set(names)].map((name) => {
    const installed = join(ROOT, "node_modules", name, "package.json");
    if (!existsSync(installed)) return name;
    return `${name}@${(JSON.parse(readFileSync(installed, "utf8")) as { version: string }).version}`;
  });
}

const STRIPS_TYPES = Boolean((process.features as { typescript?: unknown }).typescript);
const TSX_VERSION = (
  JSON.parse(readFileSync(join(ROOT, "node_modules/tsx/package.json"), "utf8")) as { version: string }
).version;
const RUN_TS = STRIPS_TYPES ? [] : ["--import", "tsx"];

/** The README's code with its ports swapped for free ones. */
function withPorts(text: string, ports: Record<number, number>): string {
  let out = text;
  for (const [readme, free] of Object.entries(ports))
    out = out.replace(new RegExp(`\\b${readme}\\b`, "g"), String(free));
  return out;
}

interface Started {
  what: string;
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
  /** Resolves once every line is printed on stdout; fails at once if the process ends first. */
  prints(lines: string[], ms?: number): Promise<void>;
}
const started: Started[] = [];

/** A process in the installed project, in its own process group (stopped as a whole in afterAll). */
function start(
  app: string,
  what: string,
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Started {
  const child = spawn(command, args, { cwd: app, detached: true, env: { ...cleanEnv(), ...env } });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const output = () => `${what}\n--- stdout ---\n${stdout}\n--- stderr ---\n${stderr.slice(-4000)}`;
  const entry: Started = {
    what,
    child,
    output,
    exited,
    async prints(lines, ms = 120_000) {
      const deadline = Date.now() + ms;
      const missing = () => lines.filter((line) => !stdout.split("\n").includes(line));
      while (missing().length > 0) {
        if (child.exitCode !== null)
          throw new Error(
            `exited with ${child.exitCode} before printing ${missing().join("\n")}\n${output()}`,
          );
        if (Date.now() > deadline) throw new Error(`never printed ${missing().join("\n")}\n${output()}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
  };
  started.push(entry);
  return entry;
}

/** Waits for every one; fails with all their failures, not only the first. */
async function allOf(work: Promise<unknown>[]): Promise<void> {
  const failed = (await Promise.allSettled(work)).flatMap((result) =>
    result.status === "rejected" ? [result.reason as Error] : [],
  );
  if (failed.length > 0) throw new Error(failed.map((error) => error.message ?? String(error)).join("\n\n"));
}

/** A file in the installed project. */
function writeIn(app: string, path: string, text: string): string {
  mkdirSync(dirname(join(app, path)), { recursive: true });
  writeFileSync(join(app, path), text);
  return path;
}

/** @doorbell/webhooks: sign, verify by hand, then post to its own receiver, which prints the body. */
async function webhooksExample(app: string): Promise<void> {
  const { webhooks } = sections();
  const file = writeIn(
    app,
    "readme/webhooks.ts",
    withPorts(typescript(webhooks), { 8787: await freePort() }),
  );
  const example = start(app, "@doorbell/webhooks README example", process.execPath, [...RUN_TS, file]);
  const stated = printed(webhooks);
  expect(stated.length, "the README says what the example prints").toBeGreaterThan(0);
  await example.prints(stated);
  expect(await example.exited, example.output()).toBe(0);
}

/**
 * @doorbell/mcp-events: step 1, step 2's handler, then each way of serving it, as the section
 * says. A client sees both event types and gets the order the tool placed for its customer.
 */
async function mcpEventsServers(app: string): Promise<void> {
  const blocks = sections().events.filter((block) => block.lang === "ts");
  const declared = blocks.filter((block) => block.heading.startsWith("1."));
  const [handler, ...ways] = blocks.slice(declared.length);
  expect(declared.length, "step 1's blocks").toBe(2);
  expect(
    ways.map((way) => way.heading),
    "node:http, Hono and stdio",
  ).toHaveLength(3);
  await allOf(
    ways.map(async (way) => {
      const port = await freePort();
      const name = way.heading.replace(/\W+/g, "-");
      const file = writeIn(
        app,
        `readme/events-${name}.ts`,
        withPorts([...declared, handler as Block, way].map((block) => block.code).join("\n"), { 3000: port }),
      );
      if (way.code.includes("serveStdio")) {
        // The client starts the server, as a local MCP client does.
        const stderr = { text: "" };
        const transport = new StdioClientTransport({
          command: process.execPath,
          args: [...RUN_TS, file],
          cwd: app,
          env: cleanEnv() as Record<string, string>,
          stderr: "pipe",
        });
        transport.stderr?.on("data", (chunk: Buffer) => {
          stderr.text += chunk.toString();
        });
        await followsOrders(transport, () => `${way.heading}\n${stderr.text}`);
        return;
      }
      const server = start(app, `@doorbell/mcp-events README, ${way.heading}`, process.execPath, [
        ...RUN_TS,
        file,
      ]);
      const url = `http://127.0.0.1:${port}/mcp`;
      await server.prints([`MCP Events at ${url}`]);
      await followsOrders(new StreamableHTTPClientTransport(new URL(url)), server.output);
    }),
  );
}

/** What section 3 of the mcp-events README says a client sees, and an order placed through the tool. */
async function followsOrders(transport: Transport, output: () => string): Promise<void> {
  const client = new Client(
    { name: "readme-check", version: "1.0.0" },
    { versionNegotiation: { mode: "auto" } },
  );
  const work = (async () => {
    await client.connect(transport);
    expect(client.getServerCapabilities()?.extensions, output()).toHaveProperty([
      "io.modelcontextprotocol/events",
    ]);
    const events = new EventsClient({ client });
    try {
      const listed = await events.list();
      expect(listed.map((event) => event.name)).toEqual(["order.placed", "build.finished"]);
      expect(listed[0]?.delivery).toEqual(expect.arrayContaining(["poll", "push"]));
      const orders = await events.subscribe("order.placed", { customer: "ada" });
      for (const [item, customer] of [
        ["tea", "bob"],
        ["coffee", "ada"],
      ]) {
        const placed = (await client.callTool({
          name: "place_order",
          arguments: { item, customer },
        })) as CallToolResult;
        expect(placed.isError, `${JSON.stringify(placed.content)}\n${output()}`).toBeFalsy();
      }
      const { value } = await orders[Symbol.asyncIterator]().next();
      expect(value).toMatchObject({ name: "order.placed", eventId: "order_2", data: { item: "coffee" } });
    } finally {
      await events.close();
      await client.close();
    }
  })();
  await withDeadline(work, output);
}

/** Fails with the process's output when `work` has not settled in two minutes (it hangs otherwise). */
async function withDeadline<T>(work: Promise<T>, output: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer in 2 minutes\n${output()}`)), 120_000);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The mcp-handler binding as its README writes it, asked for its event catalog by a signed-in client. */
async function mcpHandlerExample(app: string): Promise<void> {
  writeIn(app, "readme/mcp-handler/server.ts", typescript(sections().mcpHandler));
  // The README's module exports `handler`; this is the request mcp-handler's withMcpAuth would pass.
  // Its delivery worker keeps running (the README's `events` is not exported), so the check exits.
  const check = writeIn(
    app,
    "readme/mcp-handler/check.ts",
    `import { handler } from "./server.ts";
const request = new Request("http://localhost/mcp", {
  method: "POST",
  headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" },
  body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "events/list", params: {} }),
});
Object.assign(request, { auth: { token: "t", clientId: "readme-check", scopes: [], extra: { sub: "ada" } } });
console.log(await (await handler(request)).text());
process.exit(0);
`,
  );
  // Its store is DATABASE_URL when set: here the README's SQLite file, whatever this machine has.
  const listed = start(app, "examples/events-mcp-handler/README.md", process.execPath, [...RUN_TS, check], {
    DATABASE_URL: undefined,
  });
  expect(await listed.exited, listed.output()).toBe(0);
  expect(listed.output()).toContain('"name":"order.placed"');
}

/**
 * @doorbell/agent against `npx doorbell serve` from the packed CLI: the tour's intent, published,
 * consented and confirmed as the person would on the holder's pages, is the one the agent watches.
 */
async function agentExample(app: string, work: string): Promise<void> {
  const holderPort = await freePort();
  const holder = start(
    app,
    "npx doorbell serve",
    "npx",
    ["--no-install", "doorbell", "serve", "--port", String(holderPort), "--data-dir", join(work, "holder")],
    { DOORBELL_SEAL_KEYS: "", DOORBELL_LOG_LEVEL: "warn" },
  );
  await holder.prints([
    `Connect an MCP client (Streamable HTTP) to http://127.0.0.1:${holderPort}/mcp. Ctrl+C stops.`,
  ]);
  const mailbox = /Mailbox\s+(http\S+)/.exec(holder.output())?.[1] as string;
  const intentCode = await withDeadline(
    confirmedIntent(`http://127.0.0.1:${holderPort}`, mailbox),
    holder.output,
  );

  const { agent: section } = sections();
  const file = writeIn(
    app,
    "readme/agent.ts",
    withPorts(typescript(section), { 8080: holderPort, 8787: await freePort() }),
  );
  const agent = start(app, "@doorbell/agent README example", process.execPath, [...RUN_TS, file], {
    DOORBELL_INTENT_CODE: intentCode,
  });
  const stated = printed(section);
  expect(stated.length, "the README says what the example prints").toBeGreaterThan(0);
  await agent.prints(stated);
}

/** Publishes the tour's intent; the person consents and confirms it on the holder's pages. */
async function confirmedIntent(origin: string, mailbox: string): Promise<string> {
  const client = new Client(
    { name: "readme-check", version: "1.0.0" },
    { versionNegotiation: { mode: "auto" } },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(`${origin}/mcp`)));
  try {
    const published = (await client.callTool({
      name: "intent_publish_intent",
      arguments: {
        statement: "A Škoda Octavia combi, diesel, near Bratislava",
        criteria: { category: "vehicles", make: "Škoda", model: "Octavia", fuel: "diesel" },
        area: { country: "SK", region: "SK-BL" },
        budget: { amount: 20000, currency: "EUR" },
      },
    })) as CallToolResult;
    const { intentCode, consentUrl } = published.structuredContent as {
      intentCode: string;
      consentUrl: string;
    };
    const browser = new Browser(origin);
    expect(
      (await browser.submit(new URL(consentUrl).pathname, { email: "jana@example.sk", consent: "yes" }))
        .status,
    ).toBe(200);
    const box = await browser.request(mailbox);
    const mail = new RegExp(`href="(${new URL(mailbox).pathname}/[^"]+)"`).exec(box.html)?.[1];
    const confirm = /\/confirm\/[0-9A-Za-z_-]+/.exec((await browser.request(mail as string)).html)?.[0];
    expect(confirm, "the confirmation mail's link").toBeDefined();
    expect((await browser.submit(confirm as string, {})).status).toBe(200);
    const intent = (await client.callTool({
      name: "intent_get_intent",
      arguments: { intentCode },
    })) as CallToolResult;
    expect((intent.structuredContent as { status: string }).status).toBe("active");
    return intentCode;
  } finally {
    await client.close();
  }
}

// ---- the test ----------------------------------------------------------------------------------

const work = mkdtempSync(join(tmpdir(), "doorbell-pack-"));
const app = join(work, "app");
afterAll(async () => {
  for (const process of started) {
    if (process.child.exitCode === null && process.child.pid !== undefined) {
      try {
        globalThis.process.kill(-process.child.pid, "SIGTERM");
      } catch {} // already gone
    }
  }
  await Promise.all(started.map((process) => process.exited));
  rmSync(work, { recursive: true, force: true });
});

describe("the packages as published", () => {
  it(
    "pack, install outside the workspace, import each, and run npx doorbell --version",
    async () => {
      expect(PACKAGES).toContain("cli");
      // The tarballs carry dist/: build first (a no-op when `npm run build` already ran).
      await run("npx", ["tsc", "-b", "tsconfig.build.json"], ROOT);

      const tarballs = join(work, "tarballs");
      mkdirSync(tarballs);
      const { stdout } = await run(
        "npm",
        ["pack", "--workspaces", "--json", "--pack-destination", tarballs],
        ROOT,
      );
      const packed = JSON.parse(stdout) as { name: string; filename: string; files: { path: string }[] }[];
      expect(packed.map((p) => p.name).sort()).toEqual(PACKAGES.map((dir) => manifest(dir).name).sort());
      for (const pack of packed) {
        const paths = pack.files.map((file) => file.path);
        expect(paths, pack.name).toEqual(expect.arrayContaining(["README.md", "LICENSE", "package.json"]));
        expect(
          paths.some((path) => path.startsWith("dist/") && path.endsWith(".js")),
          pack.name,
        ).toBe(true);
        expect(
          paths.some((path) => path.startsWith("test/")),
          pack.name,
        ).toBe(false);
      }

      const prebuilds = await localPrebuilds(join(work, "prebuilds"));
      mkdirSync(app);
      writeFileSync(
        join(app, "package.json"),
        JSON.stringify({
          name: "doorbell-pack-check",
          private: true,
          type: "module",
          allowScripts: { "better-sqlite3": true },
        }),
      );
      await run(
        "npm",
        [
          "install",
          "--no-audit",
          "--no-fund",
          "--prefer-offline",
          ...packed.map((p) => join(tarballs, p.filename)),
          // What the READMEs' snippets install beside Doorbell (mcp-handler, the SDK's adapters…).
          ...readmeInstalls(),
          // How a reader on a Node without type stripping runs the snippets' TypeScript.
          ...(STRIPS_TYPES ? [] : [`tsx@${TSX_VERSION}`]),
        ],
        app,
        { npm_config_better_sqlite3_local_prebuilds: prebuilds },
      );

      for (const dir of PACKAGES) {
        const { name } = manifest(dir);
        const { stdout: exports } = await run(
          process.execPath,
          [
            "--input-type=module",
            "-e",
            `console.log(Object.keys(await import(${JSON.stringify(name)})).length)`,
          ],
          app,
        );
        expect(Number(exports.trim()), name).toBeGreaterThan(0);
      }
      // The subpaths that have no test of their own below.
      for (const subpath of ["@doorbell/intents/server", "@doorbell/mcp-endpoint/client"]) {
        const { stdout: exports } = await run(
          process.execPath,
          [
            "--input-type=module",
            "-e",
            `console.log(Object.keys(await import(${JSON.stringify(subpath)})).length)`,
          ],
          app,
        );
        expect(Number(exports.trim()), subpath).toBeGreaterThan(0);
      }

      // better-sqlite3 installed for this Node and loaded: a real database through the published store.
      const { stdout: sqlite } = await run(
        process.execPath,
        [
          "--input-type=module",
          "-e",
          `import { openDatabase } from "@doorbell/store";
         const db = await openDatabase("./check.sqlite");
         console.log(db.dialect);
         await db.close();`,
        ],
        app,
      );
      expect(sqlite.trim()).toBe("sqlite");

      const version = await run("npx", ["--no-install", "doorbell", "--version"], app);
      expect(version.stdout).toBe(`${manifest("cli").version}\n`);
      const help = await run("npx", ["--no-install", "doorbell", "serve", "--help"], app);
      expect(help.stdout).toMatch(/^doorbell serve/);
    },
    25 * 60_000,
  );

  it(
    "runs the five-minute snippets of the READMEs there, as written",
    async () => {
      expect(existsSync(join(app, "node_modules/@doorbell/cli")), "installed by the test above").toBe(true);
      await allOf([
        webhooksExample(app),
        mcpEventsServers(app),
        mcpHandlerExample(app),
        agentExample(app, work),
      ]);
    },
    10 * 60_000,
  );
});
