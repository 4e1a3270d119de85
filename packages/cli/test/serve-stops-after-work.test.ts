/**
 * Issue 30 item 1: a real `doorbell serve` process (SQLite, its defaults) stops on SIGTERM after
 * each kind of work, with exit code 0 and by itself, and never needs the stop deadline. Before the
 * fix, one catalogue search left the search thread running and the process never exited.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client as ModernClient, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, describe, expect, it } from "vitest";
import { freePort, type Started, doorbell as spawnDoorbell } from "./cluster-harness.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-stops-"));
const live: Started[] = [];
afterAll(() => {
  for (const server of live) server.child.kill("SIGKILL");
  fs.rmSync(dir, { recursive: true, force: true });
});

/** `doorbell serve` with its defaults (the demo catalogue, SQLite under its own data dir). */
async function serve(name: string): Promise<{ server: Started; origin: string }> {
  const port = await freePort();
  const server = spawnDoorbell(name, ["serve", "--port", String(port), "--data-dir", path.join(dir, name)], {
    DOORBELL_SEAL_KEYS: "",
  });
  live.push(server);
  await server.waitFor("Ctrl+C stops");
  return { server, origin: `http://127.0.0.1:${port}` };
}

/** SIGTERM, then the exit code: the deadline (30 s) would end a stuck process with 1. */
async function stop(server: Started): Promise<number | null> {
  server.child.kill("SIGTERM");
  const code = await server.exited;
  expect(server.out.text).toContain("stopping…");
  expect(server.out.errors).not.toContain("still not stopped");
  return code;
}

async function modern(origin: string): Promise<ModernClient> {
  const client = new ModernClient({ name: "stops", version: "1" }, { versionNegotiation: { mode: "auto" } });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${origin}/mcp`)));
  return client;
}

describe("doorbell serve stops by itself after each kind of work", () => {
  it("after a catalogue search (its SQLite search thread)", async () => {
    const { server, origin } = await serve("search");
    const client = await modern(origin);
    const found = await client.callTool({ name: "intent_search_offers", arguments: { statement: "Škoda" } });
    expect(found.isError).toBeFalsy();
    await client.close();
    expect(await stop(server)).toBe(0);
  }, 60_000);

  it("after a publish, a pull, the pages, and with a 2025-11-25 session's stream still open", async () => {
    const { server, origin } = await serve("mixed");
    const client = await modern(origin);
    const published = await client.callTool({
      name: "intent_publish_intent",
      arguments: {
        statement: "A Škoda Octavia combi near Bratislava",
        criteria: { category: "vehicles", make: "Škoda" },
        area: { country: "SK" },
      },
    });
    const { intentCode, consentUrl } = published.structuredContent as {
      intentCode: string;
      consentUrl: string;
    };
    const pulled = await client.callTool({ name: "intent_list_matches", arguments: { intentCode } });
    expect(pulled.isError).toBeFalsy();
    await client.close();
    expect((await fetch(consentUrl)).status).toBe(200);
    expect((await fetch(`${origin}/`)).status).toBeLessThan(500);

    // A legacy session left open: its GET stream is still listening when the signal comes.
    const legacy = new LegacyClient({ name: "stops-legacy", version: "1" });
    await legacy.connect(new LegacyTransport(new URL(`${origin}/mcp`)));
    await legacy.listTools();
    expect(await stop(server)).toBe(0);
    await legacy.close();
  }, 60_000);
});
