import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/client";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterEach, describe, expect, it } from "vitest";
import { EventsClient, type SubscriptionNotice } from "../src/client/index.js";
import { take, until } from "./client-harness.js";
import { EVENT } from "./client-upstream.js";

const SERVER = path.join(path.dirname(fileURLToPath(import.meta.url)), "client-stdio-server.ts");

let latest: Client | undefined;
const clients: EventsClient[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
  latest = undefined;
});

async function connectStdio(dialect = "sketch"): Promise<Client> {
  // SDK v2, probing 2026-07-28 first: the 1.x stdio server answers the probe as a legacy server.
  const client = new Client(
    { name: "events-stdio-client", version: "1.0.0" },
    { versionNegotiation: { mode: "auto" } },
  );
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: ["--conditions=@doorbell/source", "--import", "tsx", SERVER],
      stderr: "ignore",
      env: { ...getDefaultEnvironment(), EVENTS_DIALECT: dialect },
    }),
  );
  latest = client;
  return client;
}

const tool = (name: string, args: Record<string, unknown> = {}) =>
  (latest as Client).callTool({ name, arguments: args });

function setup(dialect: "sketch" | "sep-3415" = "sketch") {
  const notices: SubscriptionNotice[] = [];
  const events = new EventsClient({
    connect: () => connectStdio(dialect),
    dialect,
    heartbeatWindowMs: 1_000,
    onNotice: (notice) => notices.push(notice),
  });
  clients.push(events);
  return { events, notices };
}

describe("over stdio", () => {
  it("push: routes stream notifications to their stream and delivers events", async () => {
    const { events } = setup();
    const sub = await events.subscribe(EVENT);
    expect(sub.mode).toBe("push");
    await tool("append", { text: "over stdio" });
    expect((await take(sub, 1))[0]?.data.text).toBe("over stdio");
  });

  it("push in sep-3415: routes notifications by _meta subscriptionId (the JSON-RPC request id)", async () => {
    const { events } = setup("sep-3415");
    const sub = await events.subscribe(EVENT);
    expect(sub.mode).toBe("push");
    await tool("append", { text: "routed by request id" });
    expect((await take(sub, 1))[0]?.data.text).toBe("routed by request id");
  });

  it("poll: delivers the same events", async () => {
    const { events } = setup();
    const sub = await events.subscribe(EVENT, {}, { delivery: "poll" });
    await tool("append", { text: "polled" });
    expect((await take(sub, 1))[0]?.data.text).toBe("polled");
  });

  it("push: a restarted server process is reconnected; its lost history is reported as a gap", async () => {
    const { events, notices } = setup();
    const sub = await events.subscribe(EVENT);
    await tool("append", { text: "first life" });
    await take(sub, 1);
    await (latest as Client).close();
    await until(() => notices.some((n) => n.type === "gap"), 15_000, "the gap after the restart");
    await until(() => sub.cursor !== null, 5_000, "the new stream");
    await tool("append", { text: "second life" });
    expect((await take(sub, 1))[0]?.data.text).toBe("second life");
  });

  it("push: revoked authorization ends the subscription with ERR_EVENTS_TERMINATED", async () => {
    const { events } = setup();
    const sub = await events.subscribe(EVENT);
    await tool("revoke");
    await expect(sub[Symbol.asyncIterator]().next()).rejects.toMatchObject({ code: "ERR_EVENTS_TERMINATED" });
  });

  it("poll: cursor expiry restarts from now and reports the gap", async () => {
    const { events, notices } = setup();
    const sub = await events.subscribe(EVENT, {}, { delivery: "poll" });
    await tool("append", { text: "a" });
    await take(sub, 1);
    await tool("append", { text: "lost" });
    await tool("compact");
    await until(() => notices.some((n) => n.type === "gap"), 5_000, "a gap");
  });
});
