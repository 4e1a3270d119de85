/**
 * An MCP Events server whose upstream is a real folder: `fs.watch` on a directory, emitting
 * `file.created` and `file.changed` with the file's name and size. Served over Streamable HTTP on
 * loopback (one SDK server and transport per MCP session) with poll, push and webhook delivery.
 *
 *   node --import tsx --conditions=@doorbell/source examples/events-folder-watcher/server.ts <dir> [--port 8765]
 */
import { createHash, randomUUID } from "node:crypto";
import fs from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { parseArgs } from "node:util";
import { createEventsServer, type EventDefinition, handleEventsHttpRequest } from "@doorbell/mcp-events";
import { developmentPolicy } from "@doorbell/webhooks";
import { getRequestListener } from "@hono/node-server";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
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
  // Webhooks to loopback receivers: this example runs on one machine.
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

const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
const http = createServer(
  getRequestListener(async (request) => {
    if (new URL(request.url).pathname !== "/mcp") return new Response("not found", { status: 404 });
    const id = request.headers.get("mcp-session-id");
    let transport = id ? sessions.get(id) : undefined;
    if (!transport) {
      if (id) return new Response("unknown session", { status: 404 });
      const fresh = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: (sid) => {
          sessions.set(sid, fresh);
        },
      });
      fresh.onclose = () => {
        if (fresh.sessionId) sessions.delete(fresh.sessionId);
      };
      const server = new McpServer({ name: "folder-watcher", version: "0.1.0" });
      events.attach(server);
      await server.connect(fresh);
      transport = fresh;
    }
    return handleEventsHttpRequest(events, transport, request);
  }),
);
http.listen(Number(values.port), values.host, () => {
  const { port } = http.address() as AddressInfo;
  console.log(`Watching ${folder}`);
  console.log(`MCP Events endpoint http://${values.host}:${port}/mcp (file.created, file.changed)`);
});

async function stop(): Promise<void> {
  watcher.close();
  for (const transport of sessions.values()) await transport.close().catch(() => undefined);
  http.closeAllConnections();
  http.close();
  await events.close();
  process.exit(0);
}
process.on("SIGINT", () => void stop());
process.on("SIGTERM", () => void stop());
