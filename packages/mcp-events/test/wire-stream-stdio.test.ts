import { PassThrough } from "node:stream";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { afterEach, describe, expect, it } from "vitest";
import { createEventsServer, type EventsServer } from "../src/index.js";
import { emailReceived, emitEmail, type Hooks, newHooks } from "./fixtures.js";
import { type Json, until } from "./harness.js";

let events: EventsServer;
let hooks: Hooks;
let stdin: PassThrough;
let stdout: PassThrough;
let lines: Json[];

/** The real stdio framing: newline-delimited JSON in on stdin, out on stdout. */
async function start(heartbeatMs = 15_000) {
  hooks = newHooks();
  events = await createEventsServer({ heartbeatMs });
  events.event(emailReceived(hooks));
  const server = new McpServer({ name: "stdio-events", version: "1.0.0" });
  events.attach(server);
  stdin = new PassThrough();
  stdout = new PassThrough();
  lines = [];
  let buffer = "";
  stdout.on("data", (chunk: Buffer) => {
    buffer += chunk.toString("utf8");
    for (let end = buffer.indexOf("\n"); end >= 0; end = buffer.indexOf("\n")) {
      lines.push(JSON.parse(buffer.slice(0, end)) as Json);
      buffer = buffer.slice(end + 1);
    }
  });
  await server.connect(new StdioServerTransport(stdin, stdout));
  write({
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
  });
  await until(() => lines.some((line) => line.id === 0));
  write({ jsonrpc: "2.0", method: "notifications/initialized" });
}

function write(message: Json) {
  stdin.write(`${JSON.stringify(message)}\n`);
}

async function take(accept: (line: Json) => boolean): Promise<Json> {
  await until(() => lines.some(accept));
  const index = lines.findIndex(accept);
  return lines.splice(index, 1)[0] as Json;
}

afterEach(async () => {
  await events?.close();
  stdin?.end();
});

const params = {
  id: "sub_email",
  name: "email.received",
  params: { from: "*@anthropic.com", redact_pii: true },
  cursor: null,
};

describe("events/stream over stdio replays the sketch", () => {
  it("concurrent streams share stdout and are routed by requestId", async () => {
    await start();
    write({ jsonrpc: "2.0", id: 1, method: "events/stream", params });
    write({
      jsonrpc: "2.0",
      id: 2,
      method: "events/stream",
      params: { ...params, id: "sub_other", params: {} },
    });
    const active1 = await take(
      (l) => l.method === "notifications/events/active" && (l.params as Json).requestId === 1,
    );
    expect(active1).toEqual({
      jsonrpc: "2.0",
      method: "notifications/events/active",
      params: { requestId: 1, id: "sub_email", cursor: expect.any(String) },
    });
    await take((l) => l.method === "notifications/events/active" && (l.params as Json).requestId === 2);
    emitEmail(events, "evt_001", "dsp@anthropic.com");
    const forOne = await take(
      (l) => l.method === "notifications/events/event" && (l.params as Json).requestId === 1,
    );
    const forTwo = await take(
      (l) => l.method === "notifications/events/event" && (l.params as Json).requestId === 2,
    );
    expect((forOne.params as Json).data).toMatchObject({ from: "[redacted]" });
    expect((forTwo.params as Json).data).toMatchObject({ from: "dsp@anthropic.com" });
  });

  it("the heartbeat is a notifications/events/heartbeat line with the requestId", async () => {
    await start(40);
    write({ jsonrpc: "2.0", id: 3, method: "events/stream", params });
    expect(await take((l) => l.method === "notifications/events/heartbeat")).toEqual({
      jsonrpc: "2.0",
      method: "notifications/events/heartbeat",
      params: { requestId: 3 },
    });
  });

  it("notifications/cancelled stops delivery and runs onUnsubscribe; no result follows", async () => {
    await start();
    write({ jsonrpc: "2.0", id: 4, method: "events/stream", params });
    await take((l) => l.method === "notifications/events/active");
    write({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 4, reason: "done" } });
    await until(() => hooks.unsubscribed.length === 1);
    emitEmail(events, "evt_late", "dsp@anthropic.com");
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(lines.filter((l) => l.method === "notifications/events/event" || l.id === 4)).toEqual([]);
  });

  it("server-side termination sends terminated, then the final StreamEventsResult", async () => {
    await start();
    write({ jsonrpc: "2.0", id: 5, method: "events/stream", params });
    await take((l) => l.method === "notifications/events/active");
    hooks.allowed = false;
    await events.recheckAuthorization();
    const terminated = await take((l) => l.method === "notifications/events/terminated");
    expect(terminated.params).toEqual({
      requestId: 5,
      id: "sub_email",
      error: { code: -32012, message: "Unauthorized", data: { reason: "Access revoked" } },
    });
    expect(await take((l) => l.id === 5)).toEqual({ jsonrpc: "2.0", id: 5, result: { _meta: {} } });
  });

  it("malformed stream params get -32602 and open nothing", async () => {
    await start();
    write({ jsonrpc: "2.0", id: 6, method: "events/stream", params: { name: 42 } });
    const answer = await take((l) => l.id === 6);
    expect(answer.error).toMatchObject({ code: -32602 });
    expect(events.liveSubscriptions).toBe(0);
  });
});
