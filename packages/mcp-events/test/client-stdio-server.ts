/**
 * The package's events server on stdio for the client tests, run as a child process. Tools on
 * the same connection drive the upstream: append, compact, revoke (then re-check authorization).
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";
import { createEventsServer } from "../src/server/index.js";
import { Upstream } from "./client-upstream.js";

const upstream = new Upstream(`${process.pid}-`);
const dialect = process.env.EVENTS_DIALECT === "sep-3415" ? "sep-3415" : "sketch";
const events = await createEventsServer({ dialect, heartbeatMs: 100, pushIntervalMs: 50, nextPollMs: 1_000 });
upstream.register(events);
const server = new McpServer({ name: "events-stdio-test", version: "1.0.0" });
const ok = { content: [{ type: "text" as const, text: "ok" }] };
server.registerTool("append", { inputSchema: { text: z.string() } }, ({ text }) => {
  upstream.append(text);
  return ok;
});
server.registerTool("compact", {}, () => {
  upstream.compact();
  return ok;
});
server.registerTool("revoke", {}, async () => {
  upstream.allowed = false;
  await events.recheckAuthorization();
  return ok;
});
events.attach(server);
await server.connect(new StdioServerTransport());
