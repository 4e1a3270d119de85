import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Experimental_MCPEventStore, Experimental_MCPEventSubscription } from "@ai-sdk/mcp";
import { getRequestListener } from "@hono/node-server";

/** Serves a web-standard handler on loopback; resolves with its base URL. */
export async function serveFetch(
  fetch: (request: Request) => Promise<Response> | Response,
): Promise<{ url: string; server: HttpServer; close(): Promise<void> }> {
  const server = createServer(getRequestListener(fetch));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The AI SDK's subscription store as its docs describe it: private, merge-on-update. */
export class MemoryEventStore implements Experimental_MCPEventStore {
  readonly byKey = new Map<string, Experimental_MCPEventSubscription>();
  async get(key: string) {
    return this.byKey.get(key);
  }
  async getById(id: string) {
    return [...this.byKey.values()].find((s) => s.id === id);
  }
  async set(subscription: Experimental_MCPEventSubscription) {
    this.byKey.set(subscription.key, structuredClone(subscription));
  }
  async update(key: string, patch: Partial<Experimental_MCPEventSubscription>) {
    const found = this.byKey.get(key);
    if (found) this.byKey.set(key, { ...found, ...patch });
  }
  async delete(key: string) {
    this.byKey.delete(key);
  }
}

/** Waits until `condition` holds. */
export async function until(condition: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A short retry schedule: a receiver that answers 503 until the client saved its state is retried soon. */
export const QUICK_RETRY = {
  delaysMs: [100, 200, 300, 500, 1_000, 1_000, 1_000],
  horizonMs: 60_000,
  jitter: 0,
  retryAfterCapMs: 1_000,
};

export type Json = Record<string, unknown>;

const MODERN = "2026-07-28";

/** One 2026-07-28 request as a deployed client writes it (headers mirror the body; `_meta` envelope). */
export async function modernRequest(
  url: string,
  id: number,
  method: string,
  params: Json = {},
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<{ status: number; message: Json }> {
  const response = await fetch(url, {
    method: "POST",
    ...(signal === undefined ? {} : { signal }),
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": MODERN,
      "mcp-method": method,
      ...headers,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id,
      method,
      params: {
        ...params,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": MODERN,
          "io.modelcontextprotocol/clientCapabilities": {},
          "io.modelcontextprotocol/clientInfo": { name: "chatgpt-profile", version: "1" },
        },
      },
    }),
  });
  const type = response.headers.get("content-type") ?? "";
  if (type.includes("text/event-stream")) {
    const text = await response.text();
    for (const frame of text.split("\n\n")) {
      const data = frame
        .split("\n")
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5).trimStart())
        .join("\n");
      if (!data) continue;
      const message = JSON.parse(data) as Json;
      if (message.id === id) return { status: response.status, message };
    }
    throw new Error("no response on the stream");
  }
  return { status: response.status, message: (await response.json()) as Json };
}
