/**
 * Real servers on loopback for the client tests: the package's own events server behind
 * Streamable HTTP, either legacy-era (an SDK 1.x Server and transport per 2025-11-25 session,
 * stream disconnects reported) or modern-only (SDK v2 `createMcpHandler`, 2026-07-28, stateless,
 * `initialize` refused), a restart that keeps the port, and the client's webhook receiver on
 * node:http. The events client always talks through an SDK v2 Client that negotiates the era.
 */
import { randomUUID } from "node:crypto";
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { getRequestListener } from "@hono/node-server";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { afterEach, expect } from "vitest";
import type { EventsClient } from "../src/client/index.js";
import {
  createEventsServer,
  type EventsServer,
  type EventsServerOptions,
  handleEventsHttpRequest,
} from "../src/server/index.js";
import type { Upstream } from "./client-upstream.js";

export interface HttpEventsServer {
  url: URL;
  events: EventsServer;
  /** Every Node socket the server accepted (to cut streams in tests). */
  sockets: Set<import("node:net").Socket>;
  /** Stops the server (all sessions and streams gone) and starts a fresh one on the same port. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Which server `startHttpEventsServer` starts: a 2025-11-25 sessionful one (SDK 1.x), a
 * 2026-07-28-only one, or SDK v2's default of both eras on one endpoint (2026-07-28, plus a
 * stateless 2025-11-25 leg: a fresh server per request, no GET stream).
 */
export type ServerEra = "legacy" | "modern" | "dual";

export async function startHttpEventsServer(
  setup: (events: EventsServer) => void,
  options: EventsServerOptions = {},
  port = 0,
  era: ServerEra = "legacy",
): Promise<HttpEventsServer> {
  let events = await createEventsServer(options);
  setup(events);
  let sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const sockets = new Set<import("node:net").Socket>();
  let modern = era === "legacy" ? undefined : modernHandler(() => events, era);

  const fetch = async (request: Request): Promise<Response> => {
    if (modern) return modern.fetch(request);
    const sessionId = request.headers.get("mcp-session-id");
    let transport = sessionId ? sessions.get(sessionId) : undefined;
    if (!transport) {
      if (sessionId) return new Response("unknown session", { status: 404 });
      const created = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          sessions.set(id, created);
        },
      });
      const server = new Server({ name: "events-test", version: "1.0.0" }, { capabilities: {} });
      events.attach(server);
      await server.connect(created);
      transport = created;
    }
    return handleEventsHttpRequest(events, transport, request);
  };

  const listen = (at: number) =>
    new Promise<HttpServer>((resolve) => {
      const http = createServer(getRequestListener(fetch));
      http.on("connection", (socket) => {
        sockets.add(socket);
        socket.on("close", () => sockets.delete(socket));
      });
      http.listen(at, "127.0.0.1", () => resolve(http));
    });
  let http = await listen(port);
  const boundPort = (http.address() as AddressInfo).port;

  const stop = async () => {
    await modern?.close();
    for (const transport of sessions.values()) await transport.close().catch(() => {});
    sessions = new Map();
    http.closeAllConnections();
    await new Promise<void>((resolve) => http.close(() => resolve()));
    await events.close();
  };

  const handle: HttpEventsServer = {
    url: new URL(`http://127.0.0.1:${boundPort}/mcp`),
    get events() {
      return events;
    },
    sockets,
    async restart() {
      await stop();
      events = await createEventsServer(options);
      setup(events);
      if (era !== "legacy") modern = modernHandler(() => events, era);
      http = await listen(boundPort);
    },
    close: stop,
  };
  return handle;
}

/**
 * SDK v2's `createMcpHandler`, a fresh McpServer per request with the events attached. `modern`:
 * `legacy: "reject"`, so a client that cannot speak 2026-07-28 is refused; `dual`: the SDK's
 * default stateless 2025-11-25 leg beside it.
 */
function modernHandler(events: () => EventsServer, era: "modern" | "dual") {
  return createMcpHandler(
    () => {
      const server = new McpServer({ name: "events-test-modern", version: "1.0.0" });
      events().attach(server);
      return server;
    },
    { legacy: era === "modern" ? "reject" : "stateless" },
  );
}

/**
 * An SDK v2 Client over Streamable HTTP. `auto` (the default) probes 2026-07-28 first and falls
 * back to a 2025-11-25 session, as a deployed client does; tests read the era it settled on.
 */
export async function connectHttp(url: URL, mode: "auto" | "legacy" = "auto"): Promise<Client> {
  const client = new Client(
    { name: "events-client-test", version: "1.0.0" },
    { versionNegotiation: { mode } },
  );
  await client.connect(new StreamableHTTPClientTransport(url));
  return client;
}

/** The client's webhook receiver on a loopback port; `url` is what goes into WebhookConfig. */
export async function startReceiverServer(): Promise<{
  url: string;
  mount(events: EventsClient): void;
  close(): Promise<void>;
}> {
  let handler:
    | ((req: import("node:http").IncomingMessage, res: import("node:http").ServerResponse) => void)
    | undefined;
  const http = createServer((req, res) => {
    if (!handler) {
      res.writeHead(503).end();
      return;
    }
    handler(req, res);
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", () => resolve()));
  const port = (http.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    mount(events) {
      const receiver = events.receiver;
      if (!receiver) throw new Error("the events client has no webhook config");
      handler = receiver.node;
    },
    async close() {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/**
 * Where a client test case keeps the server it starts and the clients it opens: the clients, then
 * the server, are closed after each case. Registers the afterEach.
 */
export function openedPerCase() {
  const opened = { server: undefined as HttpEventsServer | undefined, clients: [] as EventsClient[] };
  afterEach(async () => {
    for (const client of opened.clients.splice(0)) await client.close();
    await opened.server?.close();
    opened.server = undefined;
  });
  return opened;
}

/** Takes `count` events from an iterator, failing after `ms`. */
export async function take<T>(iterable: AsyncIterable<T>, count: number, ms = 10_000): Promise<T[]> {
  const out: T[] = [];
  const iterator = iterable[Symbol.asyncIterator]();
  const deadline = new Promise<never>((_, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out after ${out.length} of ${count} events`)), ms);
    timer.unref();
  });
  while (out.length < count) {
    const next = await Promise.race([iterator.next(), deadline]);
    if (next.done) break;
    out.push(next.value);
  }
  return out;
}

export async function until(
  check: () => boolean | Promise<boolean>,
  ms = 10_000,
  what = "condition",
): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Revokes the upstream's authorization and has the server recheck it: the subscription must end
 * with ERR_EVENTS_TERMINATED carrying the sketch's Unauthorized code, whatever the delivery mode.
 */
export async function expectEndsWhenRevoked(
  upstream: Upstream,
  server: HttpEventsServer | undefined,
  sub: AsyncIterable<unknown>,
): Promise<void> {
  upstream.allowed = false;
  await server?.events.recheckAuthorization();
  await expect(sub[Symbol.asyncIterator]().next()).rejects.toMatchObject({
    code: "ERR_EVENTS_TERMINATED",
    serverCode: -32012,
  });
}
