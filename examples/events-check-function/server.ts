/**
 * MCP Events on the MCP TypeScript SDK v2, with a check function: an order book whose
 * `order.placed` events are read "since cursor" from the book itself, so poll, push and webhook
 * all serve the same history and a restart loses nothing the book still holds. A second type,
 * `store.announcement`, is emit-only (`events.emit`). Served with `createMcpHandler` (a fresh
 * McpServer per request, protocol 2026-07-28, plus the stateless 2025-11-25 fallback).
 *
 *   node --import tsx --conditions=@doorbell/source examples/events-check-function/server.ts \
 *     [--port 8766] [--token dev-token] [--allow-loopback-webhooks]
 *
 * Webhook subscriptions need an authenticated principal: send `Authorization: Bearer <token>`.
 * Callbacks must be public https URLs; `--allow-loopback-webhooks` (tests and local development
 * only) lets them go to 127.0.0.1 over http.
 */
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import {
  createEventsServer,
  EventsError,
  type EventsServer,
  type EventsServerOptions,
  withEventsListen,
} from "@doorbell/mcp-events";
import { developmentPolicy, productionPolicy } from "@doorbell/webhooks";
import { getRequestListener } from "@hono/node-server";
import {
  type AuthInfo,
  createMcpHandler,
  hostHeaderValidationResponse,
  localhostAllowedHostnames,
  McpServer,
} from "@modelcontextprotocol/server";
import { z } from "zod/v4";

export interface Order {
  seq: number;
  customer: string;
  item: string;
  at: string;
}

/** The upstream: an append-only order book that keeps its newest `retain` orders. */
export class OrderBook {
  private readonly orders: Order[] = [];
  private seq = 0;
  constructor(private readonly retain = 1_000) {}

  place(customer: string, item: string): Order {
    this.seq += 1;
    const order = { seq: this.seq, customer, item, at: new Date().toISOString() };
    this.orders.push(order);
    if (this.orders.length > this.retain) this.orders.splice(0, this.orders.length - this.retain);
    return order;
  }

  get head(): number {
    return this.seq;
  }

  /** Orders after `seq`, or undefined when some of them are no longer kept. */
  after(seq: number, limit: number): { orders: Order[]; more: boolean } | undefined {
    const oldest = this.orders[0]?.seq ?? this.seq + 1;
    if (seq + 1 < oldest && seq < this.seq) return undefined;
    const newer = this.orders.filter((order) => order.seq > seq);
    return { orders: newer.slice(0, limit), more: newer.length > limit };
  }
}

export interface ExampleOptions {
  /** The bearer token this example accepts (its subject is "demo-user"). */
  token?: string;
  /** Tests and local development only: webhook callbacks may go to loopback over http. */
  allowLoopbackWebhooks?: boolean;
  /** Orders kept by the book (a small number lets a test lose history on purpose). */
  retain?: number;
  /** Passed to the events server (intervals, webhook TTLs and retries). */
  tuning?: Omit<EventsServerOptions, "webhook"> & {
    webhook?: Partial<NonNullable<EventsServerOptions["webhook"]>>;
  };
}

export interface ExampleApp {
  readonly events: EventsServer;
  readonly book: OrderBook;
  fetch(request: Request): Promise<Response>;
  close(): Promise<void>;
}

const orderParams = z.object({
  customer: z.string().max(100).optional().describe("only this customer's orders"),
});
type OrderParams = z.output<typeof orderParams>;

export async function createExampleApp(options: ExampleOptions = {}): Promise<ExampleApp> {
  const token = options.token ?? "dev-token";
  const book = new OrderBook(options.retain);
  const { webhook: webhookTuning, ...tuning } = options.tuning ?? {};
  const events = await createEventsServer({
    nextPollMs: 2_000,
    pushIntervalMs: 2_000,
    ...tuning,
    webhook: {
      policy: options.allowLoopbackWebhooks ? developmentPolicy() : productionPolicy(),
      ttlMs: 10 * 60_000,
      ...webhookTuning,
    },
  });

  // The check function: everything after the cursor, read from the book. No cursor: now.
  events.event<OrderParams>({
    name: "order.placed",
    description: "An order was placed (optionally: by one customer)",
    params: orderParams as unknown as z.ZodType<OrderParams>,
    payloadSchema: {
      type: "object",
      properties: { customer: { type: "string" }, item: { type: "string" } },
      required: ["customer", "item"],
    },
    check(_ctx, params, cursor, { maxEvents }) {
      if (cursor === null) return { events: [], cursor: String(book.head) };
      const since = Number(cursor);
      if (!Number.isSafeInteger(since) || since < 0 || since > book.head)
        throw new EventsError("InvalidParams", { field: "cursor" }, "not a cursor of this order book");
      const read = book.after(since, maxEvents);
      if (!read) throw new EventsError("CursorExpired", { reason: "older orders are no longer kept" });
      const mine = read.orders.filter((o) => params.customer === undefined || o.customer === params.customer);
      const last = read.orders.at(-1)?.seq ?? since;
      return {
        events: mine.map((o) => ({
          eventId: `order_${o.seq}`,
          timestamp: o.at,
          data: { customer: o.customer, item: o.item },
          cursor: String(o.seq),
        })),
        cursor: String(last),
        hasMore: read.more,
      };
    },
  });

  // An emit-only type: the server keeps a short window of them for poll and replays.
  events.event({
    name: "store.announcement",
    description: "The shop announced something",
    payloadSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  });

  const factory = () => {
    const server = new McpServer({ name: "doorbell-events-example", version: "1.0.0" });
    events.attach(server);
    server.registerTool(
      "place_order",
      { description: "Place an order", inputSchema: z.object({ customer: z.string(), item: z.string() }) },
      ({ customer, item }) => {
        const order = book.place(customer, item);
        // The upstream changed: live push and webhook subscriptions check now.
        events.wake("order.placed");
        return { content: [{ type: "text", text: `order ${order.seq} placed` }] };
      },
    );
    server.registerTool(
      "announce",
      { description: "Announce something", inputSchema: z.object({ text: z.string().max(1000) }) },
      ({ text }) => {
        events.emit("store.announcement", { data: { text } });
        return { content: [{ type: "text", text: "announced" }] };
      },
    );
    return server;
  };
  const handler = createMcpHandler(factory);
  const mcp = withEventsListen(handler, events);

  const authenticate = (request: Request): AuthInfo | undefined => {
    const header = request.headers.get("authorization") ?? "";
    if (header !== `Bearer ${token}`) return undefined;
    return { token, clientId: "example-client", scopes: [], extra: { sub: "demo-user" } };
  };

  return {
    events,
    book,
    async fetch(request) {
      const rejected = hostHeaderValidationResponse(request, localhostAllowedHostnames());
      if (rejected) return rejected;
      if (new URL(request.url).pathname !== "/mcp") return new Response("not found", { status: 404 });
      // Anonymous callers may list, poll and stream; webhooks answer Forbidden without a token.
      const authInfo = authenticate(request);
      if (authInfo === undefined && request.headers.has("authorization"))
        return new Response(null, { status: 401, headers: { "www-authenticate": "Bearer" } });
      return mcp.fetch(request, authInfo === undefined ? {} : { authInfo });
    },
    async close() {
      mcp.close();
      await handler.close();
      await events.close();
    },
  };
}

/** Serves the app on loopback; resolves with its /mcp URL. */
export async function listenExample(
  app: ExampleApp,
  port = 0,
  host = "127.0.0.1",
): Promise<{ url: string; server: HttpServer }> {
  const server = createServer(getRequestListener((request) => app.fetch(request)));
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  const address = server.address() as AddressInfo;
  return { url: `http://${host}:${address.port}/mcp`, server };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({
    options: {
      port: { type: "string", default: "8766" },
      token: { type: "string", default: "dev-token" },
      "allow-loopback-webhooks": { type: "boolean", default: false },
    },
  });
  const app = await createExampleApp({
    token: values.token,
    allowLoopbackWebhooks: values["allow-loopback-webhooks"],
  });
  const { url } = await listenExample(app, Number(values.port));
  console.log(`MCP Events example (check function) at ${url}`);
}
