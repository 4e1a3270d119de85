// DNS rebinding protection (MCP transports, "Security Warning"): the endpoint answers only for
// this holder's own Host names and, when a browser sends an Origin, only for its own origin (or a
// loopback one). A refused request gets 403 with a JSON-RPC error and opens no session.

import { createOriginGuard } from "@doorbell/mcp-endpoint";
import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  INITIALIZE,
  jsonRpcOf,
  MCP_HEADERS,
  rawRequest,
  startHolder,
  type TestHolder,
} from "../support/mcp-harness.js";

describe("the Host and Origin check on its own", () => {
  const guard = createOriginGuard({ publicUrl: "https://intents.example.sk" });
  const request = (headers: Record<string, string>) =>
    ({ headers: new Headers(headers), url: "https://intents.example.sk/mcp" }) as Request;

  it.each([
    ["", "empty"],
    [":443", "port only"],
    ["intents.example.sk:https", "a named port"],
    ["[::1", "an unclosed IPv6 literal"],
    ["[::1]x", "garbage after an IPv6 literal"],
    ["evil.example", "another host"],
  ])("refuses Host %j (%s)", (host) => {
    expect(guard(request({ host }))).toMatch(/Host/);
  });

  it("accepts the public host with or without port, in any case, and loopback names", () => {
    for (const host of [
      "intents.example.sk",
      "INTENTS.example.sk:443",
      "localhost:8080",
      "[::1]:1",
      "127.0.0.1",
    ]) {
      expect(guard(request({ host }))).toBeUndefined();
    }
  });

  it("accepts no loopback names when told so", () => {
    const strict = createOriginGuard({ publicUrl: "https://intents.example.sk", allowLoopback: false });
    expect(strict(request({ host: "localhost" }))).toMatch(/Host/);
    expect(strict(request({ host: "intents.example.sk", origin: "http://localhost:3000" }))).toMatch(
      /Origin/,
    );
  });

  it("falls back to the URL's host when no Host header is present", () => {
    expect(
      guard({ headers: new Headers(), url: "https://intents.example.sk/mcp" } as Request),
    ).toBeUndefined();
    expect(guard({ headers: new Headers(), url: "https://evil.example/mcp" } as Request)).toMatch(/Host/);
  });
});

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let h: TestHolder;
  let port: string;

  beforeAll(async () => {
    h = await startHolder(engine, {
      mcp: { allowedHosts: ["intents.example.sk"], allowedOrigins: ["https://app.example.sk"] },
    });
    port = h.mcpUrl.port;
  });
  afterAll(async () => {
    await h?.close();
  });

  const initialize = (headers: Record<string, string>) =>
    rawRequest(h.mcpUrl, { headers: { ...MCP_HEADERS, ...headers }, body: JSON.stringify(INITIALIZE) });

  it.each([
    ["127.0.0.1 (the public URL's host)", () => `127.0.0.1:${port}`],
    ["localhost", () => `localhost:${port}`],
    ["[::1]", () => `[::1]:${port}`],
    ["an allowed extra host", () => "intents.example.sk"],
    ["an allowed host with a trailing dot", () => "intents.example.sk."],
  ])("serves Host %s", async (_what, host) => {
    const response = await initialize({ host: host() });
    expect(response.status).toBe(200);
    expect(response.headers["mcp-session-id"]).toBeDefined();
  });

  it.each([
    ["a rebinding domain", () => `evil.example:${port}`],
    ["a suffix trick", () => `127.0.0.1.evil.example:${port}`],
    ["a prefix trick", () => `evil-intents.example.sk`],
  ])("refuses Host %s with 403 and opens no session", async (_what, host) => {
    const before = h.mcp.sessionCount;
    const response = await initialize({ host: host() });
    expect(response.status).toBe(403);
    const message = jsonRpcOf(response);
    expect(message.error?.code).toBe(-32000);
    expect(message.error?.message).toMatch(/DNS rebinding/);
    expect(response.headers["mcp-session-id"]).toBeUndefined();
    expect(h.mcp.sessionCount).toBe(before);
  });

  it.each([
    ["a port-only garbage host", () => `:${port}`],
    ["a host with a path", () => "127.0.0.1/x"],
  ])("refuses Host %s before any MCP handling (the HTTP server answers 400)", async (_what, host) => {
    const before = h.mcp.sessionCount;
    const response = await initialize({ host: host() });
    expect([400, 403]).toContain(response.status);
    expect(h.mcp.sessionCount).toBe(before);
  });

  it.each([
    ["the holder's own origin", () => `http://127.0.0.1:${port}`],
    ["a loopback origin on another port", () => "http://localhost:5173"],
    ["an allowed extra origin", () => "https://app.example.sk"],
  ])("serves Origin %s", async (_what, origin) => {
    const response = await initialize({ host: `127.0.0.1:${port}`, origin: origin() });
    expect(response.status).toBe(200);
  });

  it.each([
    ["a foreign web page", () => "https://evil.example"],
    ["a look-alike", () => "https://app.example.sk.evil.example"],
    ["the opaque null origin", () => "null"],
    ["an allowed host under another scheme", () => "http://app.example.sk"],
    ["garbage", () => "not a url"],
  ])("refuses Origin %s with 403", async (_what, origin) => {
    const before = h.mcp.sessionCount;
    const response = await initialize({ host: `127.0.0.1:${port}`, origin: origin() });
    expect(response.status).toBe(403);
    expect(jsonRpcOf(response).error?.message).toMatch(/Origin/);
    expect(h.mcp.sessionCount).toBe(before);
  });

  it("checks every request of a session, not only initialize", async () => {
    const opened = await initialize({ host: `127.0.0.1:${port}` });
    const session = opened.headers["mcp-session-id"] as string;
    const list = await rawRequest(h.mcpUrl, {
      headers: {
        ...MCP_HEADERS,
        host: `evil.example:${port}`,
        "mcp-session-id": session,
        "mcp-protocol-version": "2025-06-18",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
    });
    expect(list.status).toBe(403);
  });

  it("leaves the public documents readable from any web page (its Host must still be ours)", async () => {
    const descriptor = await rawRequest(new URL(`${h.origin}/.well-known/isto-intents.json`), {
      method: "GET",
      headers: { host: `127.0.0.1:${port}`, origin: "https://evil.example" },
    });
    expect(descriptor.status).toBe(200);
  });
});
