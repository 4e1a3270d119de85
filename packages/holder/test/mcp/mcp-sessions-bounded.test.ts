// Session mode without leaks: idle sessions are closed after sessionIdleMs, at most maxSessions
// exist (the least recently used makes room), and a closed session's client is told 404 so it can
// start again.
import { forEachEngine } from "@doorbell/store/testing";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  INITIALIZE,
  MCP_HEADERS,
  MINUTE,
  ok,
  rawRequest,
  startHolder,
  type TestHolder,
} from "../support/mcp-harness.js";

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let h: TestHolder;

  beforeAll(async () => {
    h = await startHolder(engine, { mcp: { maxSessions: 3, sessionIdleMs: 10 * MINUTE } });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("keeps at most maxSessions, closing the least recently used", async () => {
    const clients: Client[] = [];
    for (let i = 0; i < 3; i++) clients.push(await h.connectLegacy(`c${i}`));
    expect(h.mcp.sessionCount).toBe(3);
    // c0 is used, so c1 is now the least recently used.
    await ok(clients[0] as Client, "intent_search_offers", { statement: "x" });
    const fourth = await h.connectLegacy("c3");
    expect(h.mcp.sessionCount).toBe(3);
    await ok(fourth, "intent_search_offers", { statement: "x" });
    await ok(clients[0] as Client, "intent_search_offers", { statement: "x" });
    await expect(
      clients[1]?.callTool({ name: "intent_search_offers", arguments: { statement: "x" } }),
    ).rejects.toThrow(/404|Session not found/);
  });

  it("closes sessions idle for longer than sessionIdleMs", async () => {
    const client = await h.connectLegacy("idle");
    h.clock.advance(10 * MINUTE + 1);
    expect(await h.mcp.sweep()).toBeGreaterThanOrEqual(1);
    expect(h.mcp.sessionCount).toBe(0);
    await expect(
      client.callTool({ name: "intent_search_offers", arguments: { statement: "x" } }),
    ).rejects.toThrow(/404|Session not found/);
    const fresh = await h.connectLegacy("fresh");
    await ok(fresh, "intent_search_offers", { statement: "x" });
  });

  it("answers POSTs with one JSON body when jsonResponse is set (still Streamable HTTP)", async () => {
    const json = await startHolder(engine, { mcp: { jsonResponse: true } });
    try {
      const client = await json.connectLegacy();
      expect(await ok(client, "intent_search_offers", { statement: "x" })).toEqual({ offers: [] });
      const opened = await rawRequest(json.mcpUrl, {
        headers: MCP_HEADERS,
        body: JSON.stringify(INITIALIZE),
      });
      expect(opened.status).toBe(200);
      expect(opened.headers["content-type"]).toMatch(/^application\/json/);
    } finally {
      await json.close();
    }
  });

  it("closes every session on close()", async () => {
    const other = await startHolder(engine);
    await other.connectLegacy();
    await other.connectLegacy();
    expect(other.mcp.sessionCount).toBe(2);
    await other.mcp.close();
    expect(other.mcp.sessionCount).toBe(0);
    await other.close();
  });
});
