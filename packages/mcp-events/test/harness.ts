import { randomUUID } from "node:crypto";
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { getRequestListener } from "@hono/node-server";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { type EventsServer, handleEventsHttpRequest } from "../src/index.js";

export interface Listening {
  url: string;
  close(): Promise<void>;
}

export async function listen(server: HttpServer): Promise<Listening> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A stateful Streamable HTTP MCP endpoint at /mcp serving the events server, one McpServer per session. */
export async function serveEvents(events: EventsServer): Promise<Listening> {
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const listener = getRequestListener(async (request) => {
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
      const server = new McpServer({ name: "events-test", version: "1.0.0" });
      events.attach(server);
      await server.connect(fresh);
      transport = fresh;
    }
    return handleEventsHttpRequest(events, transport, request);
  });
  return listen(createServer(listener));
}

export type Json = Record<string, unknown>;

/** Raw JSON-RPC over Streamable HTTP: what any client in any language would send. */
export class RawSession {
  private sessionId = "";
  constructor(private readonly url: string) {}

  static async open(base: string): Promise<RawSession> {
    const session = new RawSession(`${base}/mcp`);
    const response = await session.post({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    });
    session.sessionId = response.headers.get("mcp-session-id") ?? "";
    await response.text();
    await (await session.post({ jsonrpc: "2.0", method: "notifications/initialized" })).text();
    return session;
  }

  post(message: Json, signal?: AbortSignal): Promise<Response> {
    return fetch(this.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-06-18",
        ...(this.sessionId ? { "mcp-session-id": this.sessionId } : {}),
      },
      body: JSON.stringify(message),
      ...(signal ? { signal } : {}),
    });
  }

  /** One request, its JSON-RPC response (read from the SSE answer). */
  async request(id: number, method: string, params: unknown): Promise<Json> {
    const response = await this.post({ jsonrpc: "2.0", id, method, params });
    for await (const message of sse(response)) if (message.id === id) return message;
    throw new Error("no response");
  }

  /** A long-lived request: every SSE message it carries, until `abort()`. */
  open(id: number, method: string, params: unknown): { messages: AsyncGenerator<Json>; abort(): void } {
    const controller = new AbortController();
    const response = this.post({ jsonrpc: "2.0", id, method, params }, controller.signal);
    async function* messages() {
      try {
        yield* sse(await response);
      } catch (error) {
        if (!controller.signal.aborted) throw error;
      }
    }
    return { messages: messages(), abort: () => controller.abort() };
  }
}

/** The `data:` frames of an SSE response, as JSON. */
export async function* sse(response: Response): AsyncGenerator<Json> {
  if (!(response.headers.get("content-type") ?? "").includes("text/event-stream")) {
    yield (await response.json()) as Json;
    return;
  }
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let end = buffer.indexOf("\n\n");
    while (end >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = frame
        .split("\n")
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5).trimStart())
        .join("\n");
      if (data) yield JSON.parse(data) as Json;
      end = buffer.indexOf("\n\n");
    }
  }
}

/** The next message from an iterator that satisfies `accept`, or a clear failure. */
export async function next(
  messages: AsyncGenerator<Json>,
  accept: (m: Json) => boolean = () => true,
): Promise<Json> {
  for (;;) {
    const { value, done } = await messages.next();
    if (done) throw new Error("the stream ended");
    if (accept(value)) return value;
  }
}

/**
 * Waits until `condition` holds (polling, for effects of other processes' timers). The deadline
 * only bounds how long a real failure takes to show: it is near the test timeout, because on a
 * loaded machine (the whole suite on two cores) a delivery can take seconds to be recorded.
 */
export async function until(condition: () => boolean | Promise<boolean>, timeoutMs = 25_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
