/**
 * MCP Events on Vercel `mcp-handler` and the MCP TypeScript SDK v2, with Doorbell as the storage
 * and delivery layer: `experimental_registerMcpEvents` gets `@doorbell/mcp-events/mcp-handler`'s
 * subscription store (SQLite or PostgreSQL) and webhook delivery (signed verification challenge,
 * durable outbox, retries, egress policy). The shop offers `order.placed`; the tool `place_order`
 * emits it.
 *
 *   node --import tsx --conditions=@doorbell/source examples/events-mcp-handler/server.ts \
 *     [--port 8767] [--host 127.0.0.1] [--token dev-token] [--allow-loopback-webhooks] \
 *     [--database URL] [--data-dir DIR] [--webhook-ca FILE]
 *
 * MCP is served at /mcp. Event methods need `Authorization: Bearer <token>`. Callbacks must be
 * https (mcp-handler refuses anything else) and, by default, public; `--allow-loopback-webhooks`
 * (local development and tests only) lets them go to 127.0.0.1, and `--webhook-ca` trusts the
 * self-signed certificate of a receiver on this machine. Without `--database` the subscriptions
 * and the outbox are in `<data-dir>/events.sqlite`; with a PostgreSQL URL every instance on it
 * serves the same subscriptions (give them the same seal keys in DOORBELL_SEAL_KEYS).
 */
import { mkdirSync, readFileSync } from "node:fs";
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { deliveryMigrations, type RetryPolicy } from "@doorbell/delivery";
import {
  type McpHandlerEvents,
  type McpHandlerEventsTables,
  mcpHandlerEvents,
  mcpHandlerMigrations,
} from "@doorbell/mcp-events/mcp-handler";
import { createSealer, loadKeyring, migrate, openDatabase } from "@doorbell/store";
import { developmentPolicy, productionPolicy } from "@doorbell/webhooks";
import { getRequestListener } from "@hono/node-server";
import { type AuthInfo, OAuthError, OAuthErrorCode } from "@modelcontextprotocol/server";
import { createMcpHandler, type ExperimentalMcpEventDefinition, withMcpAuth } from "mcp-handler";
import { z } from "zod/v4";

export interface ExampleOptions {
  /** The bearer token accepted (its subject is "demo-user"). */
  token?: string;
  /** Local development and tests only: callbacks may go to loopback addresses. */
  allowLoopbackWebhooks?: boolean;
  /** A PostgreSQL or SQLite URL; default: a SQLite file in `dataDir`. */
  database?: string;
  /** Where the SQLite file and the generated seal keys live (default `.events-mcp-handler`). */
  dataDir?: string;
  /** An extra CA (PEM) trusted for callbacks: a receiver with a self-signed certificate. */
  webhookCa?: string | Buffer;
  /** Tests: a shorter retry schedule and verification timeout. */
  tuning?: { retry?: RetryPolicy; verifyTimeoutMs?: number };
}

export interface ExampleApp {
  readonly events: McpHandlerEvents;
  fetch(request: Request): Promise<Response>;
  close(): Promise<void>;
}

const orderFilter = z.strictObject({
  customer: z.string().max(100).optional().describe("only this customer's orders"),
});
const orderPayload = z.object({ orderId: z.string(), customer: z.string(), item: z.string() });

const orderPlaced: ExperimentalMcpEventDefinition = {
  name: "order.placed",
  description: "An order was placed (optionally: by one customer)",
  inputSchema: orderFilter,
  payloadSchema: orderPayload,
  // Every signed-in user may follow every order in this demo shop.
  authorize: () => true,
};

export async function createExampleApp(options: ExampleOptions = {}): Promise<ExampleApp> {
  const token = options.token ?? "dev-token";
  const dataDir = path.resolve(options.dataDir ?? ".events-mcp-handler");
  const database = options.database ?? `sqlite:${path.join(dataDir, "events.sqlite")}`;
  // The SQLite file and the generated seal keys (unless DOORBELL_SEAL_KEYS gives them) live here.
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const store = await openDatabase<McpHandlerEventsTables>(database);
  await migrate(store, [deliveryMigrations, mcpHandlerMigrations]);
  const { keyring } = loadKeyring({ dataDir });
  const ca = options.webhookCa === undefined ? {} : { ca: options.webhookCa };
  const events = mcpHandlerEvents({
    store,
    sealer: createSealer(keyring),
    events: [orderPlaced],
    policy: options.allowLoopbackWebhooks ? developmentPolicy(ca) : productionPolicy(ca),
    ...(options.tuning?.retry ? { retry: options.tuning.retry } : {}),
    ...(options.tuning?.verifyTimeoutMs ? { verifyTimeoutMs: options.tuning.verifyTimeoutMs } : {}),
  });

  const handler = createMcpHandler(
    (server) => {
      events.register(server, {
        // The token's subject, scoped by issuer: the identity subscriptions belong to.
        getPrincipal: (authInfo) => `example:${String(authInfo.extra?.sub ?? "")}`,
      });
      server.registerTool(
        "place_order",
        {
          description: "Place an order",
          inputSchema: z.object({ customer: z.string().max(100), item: z.string().max(200) }),
        },
        async ({ customer, item }) => {
          const orderId = `order_${crypto.randomUUID()}`;
          const delivered = await events.emit(
            "order.placed",
            { orderId, customer, item },
            {
              eventId: orderId,
              matches: (args) => args.customer === undefined || args.customer === customer,
            },
          );
          return {
            content: [{ type: "text", text: `${orderId} placed (${delivered} subscription(s) notified)` }],
          };
        },
      );
    },
    { serverInfo: { name: "doorbell-events-mcp-handler-example", version: "1.0.0" } },
  );

  const verifyToken = (_request: Request, bearer?: string): AuthInfo | undefined => {
    if (bearer === undefined) return undefined;
    if (bearer !== token) throw new OAuthError(OAuthErrorCode.InvalidToken, "Unknown token");
    return { token: bearer, clientId: "example-client", scopes: [], extra: { sub: "demo-user" } };
  };
  const mcp = withMcpAuth(handler, verifyToken);

  return {
    events,
    async fetch(request) {
      if (new URL(request.url).pathname !== "/mcp") return new Response("not found", { status: 404 });
      return mcp(request);
    },
    async close() {
      await events.close();
      await store.close();
    },
  };
}

/** Serves the app; resolves with its /mcp URL. */
export async function listenExample(
  app: ExampleApp,
  port = 0,
  host = "127.0.0.1",
): Promise<{ url: string; server: HttpServer }> {
  const server = createServer(getRequestListener((request) => app.fetch(request)));
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  const address = server.address() as AddressInfo;
  const shown = host.includes(":") ? `[${host}]` : host;
  return { url: `http://${shown}:${address.port}/mcp`, server };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({
    options: {
      port: { type: "string", default: "8767" },
      host: { type: "string", default: "127.0.0.1" },
      token: { type: "string", default: "dev-token" },
      "allow-loopback-webhooks": { type: "boolean", default: false },
      database: { type: "string" },
      "data-dir": { type: "string" },
      "webhook-ca": { type: "string" },
    },
  });
  const app = await createExampleApp({
    token: values.token,
    allowLoopbackWebhooks: values["allow-loopback-webhooks"],
    ...(values.database === undefined ? {} : { database: values.database }),
    ...(values["data-dir"] === undefined ? {} : { dataDir: values["data-dir"] }),
    ...(values["webhook-ca"] === undefined ? {} : { webhookCa: readFileSync(values["webhook-ca"]) }),
  });
  const { url, server } = await listenExample(app, Number(values.port), values.host);
  console.log(`MCP Events example (mcp-handler) at ${url}`);
  const stop = () => {
    server.closeAllConnections();
    server.close();
    void app.close().then(() => process.exit(0));
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}
