/**
 * An MCP Events server whose upstream is a real folder: `fs.watch` on a directory, emitting
 * `file.created` and `file.changed` with the file's name and size, offered by poll, push and
 * webhook. Served on loopback with the MCP TypeScript SDK v2's `createMcpHandler`: a fresh
 * McpServer per request, protocol 2026-07-28, plus the stateless 2025-11-25 fallback.
 *
 *   node --import tsx --conditions=@doorbell/source examples/events-folder-watcher/server.ts <dir> [--port 8765]
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { parseArgs } from "node:util";
import { createEventsServer, type EventDefinition, withEventsListen } from "@doorbell/mcp-events";
import { developmentPolicy } from "@doorbell/webhooks";
import { getRequestListener } from "@hono/node-server";
import {
  createMcpHandler,
  hostHeaderValidationResponse,
  localhostAllowedHostnames,
  McpServer,
} from "@modelcontextprotocol/server";
import { z } from "zod";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { port: { type: "string", default: "8765" }, host: { type: "string", default: "127.0.0.1" } },
});
const dir = positionals[0];
if (dir === undefined || !fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory()) {
  console.error("usage: server.ts <directory> [--port 8765] [--host 127.0.0.1]");
  process.exit(2);
}
const folder = path.resolve(dir);

const events = await createEventsServer({
  nextPollMs: 2_000,
  pushIntervalMs: 1_000,
  // Webhooks to loopback receivers, no token needed: this example runs on one machine.
  webhook: { policy: developmentPolicy(), allowAnonymous: true, ttlMs: 10 * 60_000 },
});

const fileParams = z.object({
  suffix: z.string().max(64).optional().describe("only files whose name ends so, e.g. .md"),
});
type FileParams = z.output<typeof fileParams>;
const payloadSchema = {
  type: "object",
  properties: { name: { type: "string" }, size: { type: "integer" } },
  required: ["name", "size"],
};
const fileEvent = (name: string, description: string): EventDefinition<FileParams> => ({
  name,
  description,
  params: fileParams as unknown as z.ZodType<FileParams>,
  payloadSchema,
  match: (_ctx, event, params) =>
    params.suffix === undefined || String(event.data.name).endsWith(params.suffix),
});
events.event(fileEvent("file.created", `A file appeared in ${path.basename(folder)}`));
events.event(fileEvent("file.changed", `A file in ${path.basename(folder)} was written`));

// The upstream: what the folder holds, so a rename that brings a new name is a creation.
const known = new Map<string, string>();
for (const name of fs.readdirSync(folder)) known.set(name, "");

function look(name: string): void {
  const stat = fs.statSync(path.join(folder, name), { throwIfNoEntry: false });
  if (stat === undefined) {
    known.delete(name);
    return;
  }
  if (!stat.isFile()) return;
  const created = !known.has(name);
  // fs.watch often reports one write twice: the same (name, size, mtime) is the same event.
  const eventId = `f_${createHash("sha256").update(`${name}\u0000${stat.size}\u0000${stat.mtimeMs}`).digest("base64url").slice(0, 22)}`;
  if (known.get(name) === eventId) return;
  known.set(name, eventId);
  events.emit(created ? "file.created" : "file.changed", {
    eventId,
    timestamp: stat.mtime,
    data: { name, size: stat.size },
  });
}
const watcher = fs.watch(folder, (_kind, name) => {
  if (name) look(name.toString());
});

// The events server holds every subscription, so each request gets a fresh McpServer with the
// events attached; withEventsListen adds events/list changes to `subscriptions/listen`.
const handler = createMcpHandler(() => {
  const server = new McpServer({ name: "folder-watcher", version: "0.1.0" });
  events.attach(server);
  return server;
});
const mcp = withEventsListen(handler, events);

const allowedHosts = [...localhostAllowedHostnames(), values.host];
const http = createServer(
  getRequestListener((request) => {
    // DNS rebinding protection: only requests addressed to this host by name.
    const rejected = hostHeaderValidationResponse(request, allowedHosts);
    if (rejected) return rejected;
    if (new URL(request.url).pathname !== "/mcp") return new Response("not found", { status: 404 });
    return mcp.fetch(request);
  }),
);
http.listen(Number(values.port), values.host, () => {
  const { port } = http.address() as AddressInfo;
  console.log(`Watching ${folder}`);
  console.log(`MCP Events endpoint http://${values.host}:${port}/mcp (file.created, file.changed)`);
});

async function stop(): Promise<void> {
  watcher.close();
  mcp.close();
  await handler.close();
  http.closeAllConnections();
  http.close();
  await events.close();
  process.exit(0);
}
process.on("SIGINT", () => void stop());
process.on("SIGTERM", () => void stop());
