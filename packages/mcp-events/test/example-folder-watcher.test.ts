// examples/events-folder-watcher/server.ts as a user runs it: a child process watching a real
// folder (SDK v2 `createMcpHandler`), followed over the 2026-07-28 wire by the client SDK and by
// Vercel's AI SDK; a file written into the folder arrives as an event. A recording proxy in front
// of the example shows which JSON-RPC methods, in which protocol version, the server was sent.
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  experimental_createMCPClient as createMCPClient,
  experimental_createMCPEventWebhook as createMCPEventWebhook,
  type Experimental_MCPEvent,
} from "@ai-sdk/mcp";
import type { Client } from "@modelcontextprotocol/client";
import { afterEach, describe, expect, it } from "vitest";
import { EventsClient } from "../src/client/index.js";
import { connectHttp, take } from "./client-harness.js";
import { MemoryEventStore, serveFetch, until } from "./interop-harness.js";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));
const SERVER = path.join(ROOT, "examples/events-folder-watcher/server.ts");
const MODERN = "2026-07-28";

const open: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close().catch(() => undefined);
});

/** A fresh folder, removed after the case. */
function tempFolder(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  open.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Starts the example on a free port and resolves with the endpoint it prints. */
async function startExample(dir: string): Promise<URL> {
  const child: ChildProcess = spawn(
    process.execPath,
    ["--import", "tsx", "--conditions=@doorbell/source", SERVER, dir, "--port", "0"],
    { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] },
  );
  open.push(async () => {
    if (child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
  });
  let output = "";
  return new Promise<URL>((resolve, reject) => {
    // A fresh process transpiles the workspace first: slow on a busy machine.
    const timer = setTimeout(() => reject(new Error(`the example did not start: ${output}`)), 60_000);
    const read = (chunk: Buffer) => {
      output += chunk.toString("utf8");
      const found = /MCP Events endpoint (http:\/\/\S+)/.exec(output);
      if (found?.[1]) {
        clearTimeout(timer);
        resolve(new URL(found[1]));
      }
    };
    child.stdout?.on("data", read);
    child.stderr?.on("data", read);
    child.once("exit", (code) => reject(new Error(`the example exited (${code}): ${output}`)));
  });
}

interface Received {
  method: string;
  /** The MCP-Protocol-Version header the request carried. */
  version: string | null;
}

const HOP_BY_HOP = ["connection", "keep-alive", "transfer-encoding", "content-length", "host"];

/** Forwards every request to `target` unchanged, keeping the JSON-RPC methods POSTed through it. */
async function recordingProxy(target: URL): Promise<{ url: URL; received: Received[] }> {
  const received: Received[] = [];
  const proxy = await serveFetch(async (request) => {
    const body = request.method === "POST" ? await request.text() : undefined;
    if (body) {
      const parsed = JSON.parse(body) as { method?: string } | { method?: string }[];
      for (const message of [parsed].flat())
        if (message.method !== undefined)
          received.push({ method: message.method, version: request.headers.get("mcp-protocol-version") });
    }
    const headers = new Headers(request.headers);
    for (const name of HOP_BY_HOP) headers.delete(name);
    const upstream = await fetch(new URL(new URL(request.url).pathname, target), {
      method: request.method,
      headers,
      ...(body === undefined ? {} : { body }),
    });
    // A client that leaves cancels this body, which closes the upstream request too.
    const answer = new Headers(upstream.headers);
    for (const name of HOP_BY_HOP) answer.delete(name);
    const empty = [204, 205, 304].includes(upstream.status);
    return new Response(empty ? null : upstream.body, { status: upstream.status, headers: answer });
  });
  open.push(proxy.close);
  return { url: new URL(`${proxy.url}/mcp`), received };
}

/** Writes `name` elsewhere and renames it in, so the file appears whole. */
function dropFile(folder: string, name: string, text: string): void {
  const staged = path.join(tempFolder("watcher-staging-"), name);
  fs.writeFileSync(staged, text);
  fs.renameSync(staged, path.join(folder, name));
}

describe("the folder-watcher example (2026-07-28)", () => {
  it("a file written into the watched folder arrives as file.created with its name and size; a rewrite as file.changed", async () => {
    const folder = tempFolder("doorbell-watch-");
    const { url, received } = await recordingProxy(await startExample(folder));
    // An SDK v2 Client, negotiating the era as a deployed client does.
    const clients: Client[] = [];
    const events = new EventsClient({
      connect: async () => {
        const client = await connectHttp(url);
        clients.push(client);
        return client;
      },
    });
    open.push(() => events.close());
    expect((await events.list()).map((type) => type.name)).toEqual(["file.created", "file.changed"]);
    const created = await events.subscribe("file.created", {}, { delivery: "push" });
    const changed = await events.subscribe("file.changed", { suffix: ".txt" }, { delivery: "poll" });
    // Let the push stream become active ("start from now") before the folder changes.
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Renamed in whole: a file created empty and then written is, rightly, file.created with
    // size 0 and then file.changed.
    dropFile(folder, "note.txt", "hello");
    const [event] = await take(created, 1, 10_000);
    expect(event).toMatchObject({ name: "file.created", data: { name: "note.txt", size: 5 } });
    fs.appendFileSync(path.join(folder, "note.txt"), ", world");
    // fs.watch may report the rename again (file.changed, size 5) before the append.
    let rewrite = (await take(changed, 1, 10_000))[0];
    if (rewrite?.data.size === 5) rewrite = (await take(changed, 1, 10_000))[0];
    expect(rewrite).toMatchObject({ name: "file.changed", data: { name: "note.txt", size: 12 } });

    // All of it over 2026-07-28: no 2025-11-25 session was opened.
    expect(clients.map((client) => client.getNegotiatedProtocolVersion())).toEqual(clients.map(() => MODERN));
    const methods = received.map((r) => r.method);
    expect(methods).toEqual(expect.arrayContaining(["events/list", "events/stream", "events/poll"]));
    expect(methods).not.toContain("initialize");
    expect(received.filter((r) => r.version !== MODERN)).toEqual([]);
  }, 90_000);

  it("Vercel's AI SDK discovers it with server/discover (no initialize fallback) and receives a webhook event", async () => {
    const folder = tempFolder("doorbell-watch-");
    const { url, received } = await recordingProxy(await startExample(folder));
    const store = new MemoryEventStore();
    const delivered: Experimental_MCPEvent[] = [];
    const hooks = await serveFetch(
      createMCPEventWebhook({
        store,
        onEvent: async ({ event }) => {
          delivered.push(event);
        },
      }),
    );
    open.push(hooks.close);
    const client = await createMCPClient({
      transport: { type: "http", url: url.href },
      experimental_events: { store },
    });
    open.push(() => client.close());

    const listed = await client.experimental_events.list();
    expect(listed.events.map((e) => [e.name, e.delivery])).toEqual([
      ["file.created", ["poll", "push", "webhook"]],
      ["file.changed", ["poll", "push", "webhook"]],
    ]);
    // The example takes anonymous webhooks to loopback (a one-machine example).
    const sub = await client.experimental_events.subscribe({
      name: "file.created",
      arguments: { suffix: ".md" },
      delivery: { mode: "webhook", url: `${hooks.url}/hooks`, allowInsecureLocalhost: true },
    });
    expect(sub.id).toMatch(/^sub_/);

    dropFile(folder, "skipped.txt", "not markdown");
    dropFile(folder, "notes.md", "# notes");
    await until(() => delivered.length > 0);
    expect(delivered).toHaveLength(1);
    expect(delivered[0]).toMatchObject({ name: "file.created", data: { name: "notes.md", size: 7 } });
    await client.experimental_events.unsubscribe({ id: sub.id });

    // The modern probe answered, so the client never fell back to a 2025-11-25 session.
    const methods = received.map((r) => r.method);
    expect(methods[0]).toBe("server/discover");
    expect(methods).not.toContain("initialize");
    expect(methods).toEqual(
      expect.arrayContaining(["events/list", "events/subscribe", "events/unsubscribe"]),
    );
    expect(received.filter((r) => r.version !== MODERN)).toEqual([]);
  }, 90_000);
});
