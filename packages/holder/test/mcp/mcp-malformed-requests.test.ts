// Malformed requests get JSON-RPC errors with 4xx statuses, never a 5xx or a stack trace: bad JSON,
// requests without a session, unknown sessions, wrong methods and media types, oversized bodies,
// unknown methods and tools. DELETE ends a session.
import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  INITIALIZE,
  jsonRpcOf,
  MCP_HEADERS,
  type RawResponse,
  rawRequest,
  startHolder,
  type TestHolder,
} from "../support/mcp-harness.js";

const PROTOCOL = "2025-06-18";

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let h: TestHolder;
  let session: string;

  const inSession = (body: string | Buffer, headers: Record<string, string> = {}) =>
    rawRequest(h.mcpUrl, {
      headers: { ...MCP_HEADERS, "mcp-session-id": session, "mcp-protocol-version": PROTOCOL, ...headers },
      body,
    });

  const expectClean = (response: RawResponse, status: number, code?: number) => {
    expect(response.status).toBe(status);
    expect(response.body).not.toMatch(/\n\s+at |node_modules|\.ts:\d+/);
    if (code !== undefined) expect(jsonRpcOf(response).error?.code).toBe(code);
  };

  beforeAll(async () => {
    h = await startHolder(engine, { mcp: { maxBodyBytes: 64 * 1024 } });
    const opened = await rawRequest(h.mcpUrl, { headers: MCP_HEADERS, body: JSON.stringify(INITIALIZE) });
    session = opened.headers["mcp-session-id"] as string;
    await inSession(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
  });
  afterAll(async () => {
    await h?.close();
  });

  describe("without a session", () => {
    it.each([
      ["invalid JSON", "{not json", 400, -32700],
      ["bytes that are not UTF-8", Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), 400, -32700],
      ["an empty body", "", 400, -32700],
      [
        "a request other than initialize",
        JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
        400,
        -32000,
      ],
      ["a JSON array", JSON.stringify([INITIALIZE]), 400, -32000],
      // Valid JSON that is no JSON-RPC request at all: Invalid Request (JSON-RPC 2.0 §5.1).
      ["a JSON string", JSON.stringify("initialize"), 400, -32600],
    ] as const)("refuses %s", async (_what, body, status, code) => {
      const response = await rawRequest(h.mcpUrl, { headers: MCP_HEADERS, body });
      expectClean(response, status, code);
    });

    it("refuses GET and DELETE without a session", async () => {
      expectClean(
        await rawRequest(h.mcpUrl, { method: "GET", headers: { accept: "text/event-stream" } }),
        400,
        -32000,
      );
      expectClean(await rawRequest(h.mcpUrl, { method: "DELETE" }), 400, -32000);
    });

    it("refuses other methods with 405 and Allow", async () => {
      const response = await rawRequest(h.mcpUrl, { method: "PUT", headers: MCP_HEADERS, body: "{}" });
      expectClean(response, 405, -32000);
      expect(response.headers.allow).toBe("GET, POST, DELETE");
    });

    it("refuses a body over the limit with 413, by Content-Length or while reading", async () => {
      const big = JSON.stringify({ ...INITIALIZE, padding: "x".repeat(70 * 1024) });
      expectClean(await rawRequest(h.mcpUrl, { headers: MCP_HEADERS, body: big }), 413, -32000);
      expectClean(
        await rawRequest(h.mcpUrl, {
          headers: { ...MCP_HEADERS, "transfer-encoding": "chunked" },
          body: big,
        }),
        413,
        -32000,
      );
    });

    it("refuses an initialize without the Accept header the transport needs, and keeps no session", async () => {
      const before = h.mcp.sessionCount;
      const response = await rawRequest(h.mcpUrl, {
        headers: { "content-type": "application/json" },
        body: JSON.stringify(INITIALIZE),
      });
      expectClean(response, 406, -32000);
      expect(h.mcp.sessionCount).toBe(before);
    });

    it("answers 404 for an unknown session", async () => {
      const response = await rawRequest(h.mcpUrl, {
        headers: { ...MCP_HEADERS, "mcp-session-id": "no-such-session", "mcp-protocol-version": PROTOCOL },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
      expectClean(response, 404, -32001);
    });
  });

  describe("inside a session", () => {
    it.each([
      ["invalid JSON", "{not json", 400, -32700],
      ["a message that is not JSON-RPC", JSON.stringify({ hello: "world" }), 400, -32600],
      ["a batch of junk", JSON.stringify([1, 2, 3]), 400, -32600],
      ["a second initialize", JSON.stringify(INITIALIZE), 400, -32600],
    ] as const)("refuses %s", async (_what, body, status, code) => {
      expectClean(await inSession(body), status, code);
    });

    it("refuses a wrong content type (415) and a wrong Accept (406)", async () => {
      const body = JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/list" });
      expectClean(await inSession(body, { "content-type": "text/plain" }), 415);
      expectClean(await inSession(body, { accept: "text/html" }), 406);
    });

    it("refuses an unsupported protocol version", async () => {
      const body = JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/list" });
      expectClean(await inSession(body, { "mcp-protocol-version": "1999-01-01" }), 400);
    });

    it("answers an unknown method with JSON-RPC -32601", async () => {
      const response = await inSession(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "intents/steal" }));
      expectClean(response, 200, -32601);
    });

    it("answers tools/call without a name with JSON-RPC -32602", async () => {
      const response = await inSession(
        JSON.stringify({ jsonrpc: "2.0", id: 4, method: "tools/call", params: {} }),
      );
      expectClean(response, 200, -32602);
    });

    it.each([
      ["an unknown tool", { name: "intent_delete_everything", arguments: {} }],
      ["arguments that are an array", { name: "intent_search_offers", arguments: ["octavia"] }],
      ["arguments that are a string", { name: "intent_search_offers", arguments: "octavia" }],
      ["no arguments", { name: "intent_get_intent" }],
    ])("answers tools/call with %s as a tool error or a JSON-RPC error", async (_what, params) => {
      const response = await inSession(
        JSON.stringify({ jsonrpc: "2.0", id: 5, method: "tools/call", params }),
      );
      expectClean(response, 200);
      const message = jsonRpcOf(response) as {
        error?: { code: number };
        result?: { isError?: boolean; content: { text: string }[] };
      };
      if (message.error !== undefined) expect(message.error.code).toBe(-32602);
      else {
        expect(message.result?.isError).toBe(true);
        expect(message.result?.content[0]?.text.length).toBeGreaterThan(5);
      }
    });

    it("ends the session on DELETE; its id then finds nothing", async () => {
      const opened = await rawRequest(h.mcpUrl, { headers: MCP_HEADERS, body: JSON.stringify(INITIALIZE) });
      const id = opened.headers["mcp-session-id"] as string;
      const before = h.mcp.sessionCount;
      const deleted = await rawRequest(h.mcpUrl, {
        method: "DELETE",
        headers: { "mcp-session-id": id, "mcp-protocol-version": PROTOCOL },
      });
      expect(deleted.status).toBe(200);
      expect(h.mcp.sessionCount).toBe(before - 1);
      const after = await rawRequest(h.mcpUrl, {
        headers: { ...MCP_HEADERS, "mcp-session-id": id, "mcp-protocol-version": PROTOCOL },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
      expectClean(after, 404, -32001);
    });
  });
});
