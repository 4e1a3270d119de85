// Admission in a 2025-11-25 session counts as in the stateless era: each request in a POST takes a
// place, held until its answer is complete, whether the answer is one JSON body or an SSE stream
// that opened long before the tool answered. A batch takes its places all at once or is refused
// whole; notifications take none. Driven with raw session requests against the endpoint.
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createMcpEndpoint, type McpEndpoint } from "../src/endpoint.js";

const PUBLIC_URL = "http://127.0.0.1:9";
const VERSION = "2025-11-25";
const HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

describe.each([
  ["SSE", false],
  ["JSON", true],
])("a session answered with %s, on an endpoint with room for 2 requests and 1 waiting", (_, jsonResponse) => {
  let endpoint: McpEndpoint<undefined> | undefined;
  afterEach(async () => endpoint?.close());

  /** An endpoint whose one tool answers when the test opens its gate, and an open session on it. */
  async function gatedSession() {
    const gates = new Map<string, () => void>();
    const ep = createMcpEndpoint<undefined>({
      publicUrl: PUBLIC_URL,
      name: "admission-test",
      version: "1.0.0",
      instructions: "test",
      role: "holder",
      toolRateLimit: false,
      sessionRateLimit: false,
      jsonResponse,
      admission: { concurrent: 2, waiting: 1 },
      register(server) {
        server.registerTool(
          "wait",
          { description: "answers when released", inputSchema: z.object({ name: z.string() }) },
          async ({ name }) => {
            await new Promise<void>((resolve) => gates.set(name, resolve));
            return { content: [{ type: "text", text: `done ${name}` }] };
          },
        );
        return undefined;
      },
    });
    endpoint = ep;
    const post = (body: unknown, headers: Record<string, string> = {}) =>
      ep(
        new Request(`${PUBLIC_URL}/mcp`, {
          method: "POST",
          headers: { ...HEADERS, ...headers },
          body: JSON.stringify(body),
        }),
      );
    const opened = await post({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    });
    await opened.text();
    const session = {
      "mcp-session-id": opened.headers.get("mcp-session-id") ?? "",
      "mcp-protocol-version": VERSION,
    };
    const inSession = (body: unknown) => post(body, session);
    const call = (name: string, id: number | string = name) => ({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "wait", arguments: { name } },
    });
    const open = (name: string) => gates.get(name)?.();
    return { ep, gates, open, inSession, call };
  }

  const until = async (check: () => boolean) => {
    for (let i = 0; i < 400 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(check()).toBe(true);
  };

  it("a call holds its place until its tool answers; the third waits, the fourth is refused with 503", async () => {
    const { ep, gates, open, inSession, call } = await gatedSession();
    const a = inSession(call("a"));
    const b = inSession(call("b"));
    await until(() => gates.has("a") && gates.has("b"));
    const c = inSession(call("c"));
    const refused = await inSession(call("d"));
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect([ep.admission.active, ep.admission.queued]).toEqual([2, 1]);

    open("a");
    expect(await (await a).text()).toContain("done a");
    await until(() => gates.has("c"));
    open("b");
    open("c");
    expect(await (await b).text()).toContain("done b");
    expect(await (await c).text()).toContain("done c");
    expect([ep.admission.active, ep.admission.queued]).toEqual([0, 0]);
  });

  it("a batch takes one place per request: it fills both places, one that does not fit is refused whole, and they come back", async () => {
    const { ep, gates, open, inSession, call } = await gatedSession();
    const batch = inSession([call("a"), call("b")]);
    await until(() => gates.has("a") && gates.has("b"));
    expect(ep.admission.active).toBe(2);

    const tooMany = await inSession([call("c"), call("d")]); // two places wanted, one waiting spot
    expect(tooMany.status).toBe(503);
    expect(tooMany.headers.get("retry-after")).toBe("1");
    expect(await tooMany.json()).toMatchObject({
      error: {
        message:
          "the holder is busy: this batch needs 2 places at once; retry in a second, or send fewer requests at a time",
      },
    });
    const never = await inSession([call("e"), call("f"), call("g")]);
    expect(never.status).toBe(400);
    expect(await never.json()).toMatchObject({
      error: {
        code: -32600,
        message:
          "Invalid Request: this batch holds 3 requests, but the holder serves at most 2 at once; send at most 2 in one batch",
      },
    });
    expect(gates.has("c") || gates.has("e")).toBe(false);

    open("a");
    open("b");
    const answered = await (await batch).text();
    expect(answered).toContain("done a");
    expect(answered).toContain("done b");
    await until(() => ep.admission.active === 0);
  });

  it("a notification takes no place, a stream may not hide in a batch, and a running id may not be reused", async () => {
    const { ep, gates, open, inSession, call } = await gatedSession();
    const a = inSession(call("a", 1));
    const b = inSession(call("b", 2));
    await until(() => gates.has("a") && gates.has("b"));

    const note = await inSession({ jsonrpc: "2.0", method: "notifications/roots/list_changed" });
    expect(note.status).toBe(202);
    const hidden = await inSession([
      { jsonrpc: "2.0", id: 3, method: "events/stream", params: {} },
      call("c", 4),
    ]);
    expect(hidden.status).toBe(400);
    expect(await hidden.json()).toMatchObject({
      error: {
        code: -32600,
        message: "Invalid Request: events/stream opens a stream and must be sent alone, not in a batch",
      },
    });
    open("a");
    expect(await (await a).text()).toContain("done a");
    const reused = await inSession(call("again", 2));
    expect(reused.status).toBe(400);
    expect(await reused.json()).toMatchObject({
      error: {
        code: -32600,
        message:
          "Invalid Request: request id 2 is already in use in this session; give every request its own id",
      },
    });
    open("b");
    expect(await (await b).text()).toContain("done b");
    await until(() => ep.admission.active === 0);
  });
});

describe("a session's open events/stream", () => {
  let endpoint: McpEndpoint<undefined> | undefined;
  afterEach(async () => endpoint?.close());

  it("holds no place once open: with more streams open than places, a call is still served", async () => {
    const ep = createMcpEndpoint<undefined>({
      publicUrl: PUBLIC_URL,
      name: "admission-test",
      version: "1.0.0",
      instructions: "test",
      role: "holder",
      toolRateLimit: false,
      sessionRateLimit: false,
      admission: { concurrent: 1, waiting: 0 },
      register(server) {
        server.registerTool("ping_tool", { description: "answers at once" }, async () => ({
          content: [{ type: "text", text: "pong" }],
        }));
        // A stream that stays open until its client leaves, as MCP Events' events/stream does.
        server.server.setRequestHandler("events/stream", { params: z.object({}).loose() }, async (_, ctx) => {
          await ctx.mcpReq.notify({ method: "notifications/events/active", params: {} });
          await new Promise<void>((resolve) => ctx.mcpReq.signal.addEventListener("abort", () => resolve()));
          return {};
        });
        return undefined;
      },
    });
    endpoint = ep;
    const post = (body: unknown, headers: Record<string, string> = {}) =>
      ep(
        new Request(`${PUBLIC_URL}/mcp`, {
          method: "POST",
          headers: { ...HEADERS, ...headers },
          body: JSON.stringify(body),
        }),
      );
    const opened = await post({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    });
    await opened.text();
    const session = {
      "mcp-session-id": opened.headers.get("mcp-session-id") ?? "",
      "mcp-protocol-version": VERSION,
    };
    const streams: Response[] = [];
    for (const id of [1, 2]) {
      const stream = await post({ jsonrpc: "2.0", id, method: "events/stream", params: {} }, session);
      expect(stream.status).toBe(200);
      streams.push(stream);
    }
    expect(ep.admission.active).toBe(0);
    const answer = await post(
      { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "ping_tool", arguments: {} } },
      session,
    );
    expect(await answer.text()).toContain("pong");
    for (const stream of streams) await stream.body?.cancel();
  });
});
