// Issue 13: the holder speaks MCP 2026-07-28 statelessly (SDK v2) and still serves 2025-11-25
// clients on the same endpoint. Through the v2 client (modern), the 1.x client (legacy) and raw
// fetch for the header and error cases, on both engines.
import http from "node:http";
import { TOOL_NAMES } from "@doorbell/intents";
import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMcpHandler } from "../../src/mcp/handler.js";
import {
  basicPublish,
  modernPost,
  ok,
  refused,
  startHolder,
  type TestHolder,
} from "../support/mcp-harness.js";

const MODERN = "2026-07-28";
const META = {
  "io.modelcontextprotocol/protocolVersion": MODERN,
  "io.modelcontextprotocol/clientCapabilities": {},
};

interface RpcAnswer {
  status: number;
  headers: Headers;
  body: { result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } };
}

/** One modern POST; `headers` override the well-formed ones (undefined removes one). */
async function modern(
  url: URL | string,
  method: string,
  params: Record<string, unknown> = {},
  headers: Record<string, string | undefined> = {},
  version = MODERN,
): Promise<RpcAnswer> {
  const response = await fetch(url, modernPost(method, params, { id: 7, headers, version }));
  const text = await response.text();
  // A response may be one JSON body or an SSE stream with one message.
  const json = text.startsWith("{") ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? "{}");
  return { status: response.status, headers: response.headers, body: JSON.parse(json) };
}

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let h: TestHolder;
  beforeAll(async () => {
    h = await startHolder(engine, { push: true });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("server/discover names the versions, capabilities, identity and the aggregator note, cacheable by all", async () => {
    const { status, body } = await modern(h.mcpUrl, "server/discover");
    expect(status).toBe(200);
    const result = body.result as Record<string, unknown> & { capabilities: Record<string, unknown> };
    expect(result.supportedVersions).toContain(MODERN);
    expect(result.capabilities.tools).toBeDefined();
    expect(result.capabilities.resources).toMatchObject({ subscribe: true });
    expect(result.instructions).toMatch(/market aggregator/);
    expect(result.resultType).toBe("complete");
    expect(result.cacheScope).toBe("public");
    expect(result.ttlMs).toBeGreaterThan(0);
    expect(result._meta).toMatchObject({ "io.modelcontextprotocol/serverInfo": { name: "doorbell-holder" } });
  });

  it("tools/list is public, cacheable and in one order every time", async () => {
    const first = await modern(h.mcpUrl, "tools/list");
    const second = await modern(h.mcpUrl, "tools/list");
    const names = (answer: RpcAnswer) =>
      ((answer.body.result?.tools ?? []) as { name: string }[]).map((tool) => tool.name);
    expect(names(first)).toEqual(names(second));
    expect(names(first)).toEqual(expect.arrayContaining([...TOOL_NAMES]));
    expect(first.body.result).toMatchObject({ resultType: "complete", cacheScope: "public" });
    expect(first.body.result?.ttlMs).toBeGreaterThan(0);
  });

  it("every tool result carries resultType, and the v2 client works the whole flow without a session", async () => {
    const raw = await modern(h.mcpUrl, "tools/call", {
      name: "intent_search_offers",
      arguments: { statement: "Octavia" },
    });
    expect(raw.status).toBe(200);
    expect(raw.headers.get("mcp-session-id")).toBeNull();
    expect(raw.body.result?.resultType).toBe("complete");

    const client = await h.connect("modern-agent");
    const published = await ok<{ intentCode: string; intent: { id: string } }>(
      client,
      "intent_publish_intent",
      basicPublish(),
    );
    const listed = await ok<{ matches: unknown[] }>(client, "intent_list_matches", {
      intentCode: published.intentCode,
    });
    expect(listed.matches).toEqual([]);
  });

  it("any endpoint over the same database answers the next request: nothing is kept per connection", async () => {
    // A second endpoint over the same services stands in for a second process behind a balancer.
    const other = createMcpHandler(
      {
        intents: h.services.intents,
        matches: h.services.matching,
        offers: h.services.offers,
        demand: h.services.demand,
      },
      { publicUrl: h.ctx.config.publicUrl, toolRateLimit: false },
    );
    try {
      const published = await modern(h.mcpUrl, "tools/call", {
        name: "intent_publish_intent",
        arguments: basicPublish(),
      });
      const code = (published.body.result?.structuredContent as { intentCode?: string } | undefined)
        ?.intentCode;
      const request = new Request(h.mcpUrl, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": MODERN,
          "mcp-method": "tools/call",
          "mcp-name": "intent_get_intent",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { _meta: META, name: "intent_get_intent", arguments: { intentCode: code } },
        }),
      });
      const answer = await other(request);
      expect(answer.status).toBe(200);
      const text = await answer.text();
      expect(text).toContain("awaiting_consent");
    } finally {
      await other.close();
    }
  });

  describe("refuses what the revision refuses, with its codes and statuses", () => {
    it("a missing MCP-Protocol-Version: 400, -32020", async () => {
      const { status, body } = await modern(
        h.mcpUrl,
        "tools/list",
        {},
        { "mcp-protocol-version": undefined },
      );
      expect(status).toBe(400);
      expect(body.error?.code).toBe(-32020);
    });
    it("an Mcp-Method that is not the body's method: 400, -32020", async () => {
      const { status, body } = await modern(h.mcpUrl, "tools/list", {}, { "mcp-method": "prompts/list" });
      expect(status).toBe(400);
      expect(body.error?.code).toBe(-32020);
    });
    it("a tools/call without Mcp-Name, or with another name: 400, -32020", async () => {
      const args = { name: "intent_search_offers", arguments: { statement: "x" } };
      const missing = await modern(h.mcpUrl, "tools/call", args, { "mcp-name": undefined });
      expect([missing.status, missing.body.error?.code]).toEqual([400, -32020]);
      const other = await modern(h.mcpUrl, "tools/call", args, { "mcp-name": "intent_get_intent" });
      expect([other.status, other.body.error?.code]).toEqual([400, -32020]);
    });
    it("an unsupported version: 400, -32022 naming the supported ones", async () => {
      const { status, body } = await modern(
        h.mcpUrl,
        "tools/list",
        {},
        { "mcp-protocol-version": "2099-01-01" },
        "2099-01-01",
      );
      expect(status).toBe(400);
      expect(body.error?.code).toBe(-32022);
      expect((body.error?.data as { supported?: string[] } | undefined)?.supported).toContain(MODERN);
    });
    it("an unknown method: 404, -32601", async () => {
      const { status, body } = await modern(h.mcpUrl, "prompts/get", { name: "nothing" });
      expect(status).toBe(404);
      expect(body.error?.code).toBe(-32601);
    });
    it("an unknown resource: -32602 with data.uri, never -32603", async () => {
      for (const uri of [
        "isto-intents://subscription/sub_AAAAAAAAAAAAAAAAAAAAAAAA",
        "isto-intents://nothing/here",
      ]) {
        const { body } = await modern(h.mcpUrl, "resources/read", { uri });
        expect(body.error?.code).toBe(-32602);
        expect(body.error?.data).toMatchObject({ uri });
      }
    });
    it("a foreign Host: 403 before anything is served", async () => {
      // fetch may not set Host; a raw request can, as a rebinding browser's would arrive.
      const status = await new Promise<number>((resolve, reject) => {
        const request = http.request(
          h.mcpUrl,
          {
            method: "POST",
            headers: { host: "rebind.attacker.example", "content-type": "application/json" },
          },
          (response) => {
            response.resume();
            resolve(response.statusCode ?? 0);
          },
        );
        request.on("error", reject);
        request.end(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: META } }));
      });
      expect([403, 421]).toContain(status);
    });
  });

  describe("legacy (2025-11-25) clients on the same endpoint", () => {
    it("the 1.x client initializes a session and calls tools", async () => {
      const client = await h.connectLegacy("legacy-agent");
      expect(client.getServerVersion()?.name).toBe("doorbell-holder");
      const refusal = await refused(client, "intent_get_intent", { intentCode: "ic_nothing" });
      expect(refusal.code).toBe("ERR_HOLDER_NOT_FOUND");
    });

    it("a session this process does not know gets 404, and the 1.x client recovers by initializing again", async () => {
      const client = await h.connectLegacy("failover-agent");
      // The process that held the session is gone: its sessions with it.
      for (const session of [...h.mcp.sessions()]) await session.server.close();
      await expect(client.listTools()).rejects.toThrow(/404|Session not found/);
      await client.close();
      const again = await h.connectLegacy("failover-agent");
      expect((await again.listTools()).tools.length).toBeGreaterThan(0);
    });
  });
});
