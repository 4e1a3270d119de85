/**
 * A holder served on a loopback port with the real services on an engine's database, and real MCP
 * clients (the SDK's Client over Streamable HTTP) to call it. Used by every mcp-* and binding-*
 * test.
 */
import { createHash } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createDeliveryEngine, type DeliveryEngine, type DeliveryEngineOptions } from "@doorbell/delivery";
import { ERROR_META_KEY, type ToolErrorMeta } from "@doorbell/intents/server";
import { scopedSignalFetch } from "@doorbell/mcp-endpoint";
import type { EngineFixture } from "@doorbell/store/testing";
import { developmentPolicy } from "@doorbell/webhooks";
import { type ServerType, serve } from "@hono/node-server";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/server";
import { expect } from "vitest";
import { createHolderServices, type HolderServices } from "../../src/app/services.js";
import type { HolderConfig } from "../../src/context.js";
import { createMcpHandler, type HolderMcpEndpoint, type McpHandlerOptions } from "../../src/mcp/handler.js";
import type { HolderToolServices } from "../../src/mcp/tools.js";
import type { CatalogueOfferInput } from "../../src/model/services.js";
import { coalescedMatchesDoorbell } from "../../src/push/coalesced-doorbell.js";
import { createTestHolderContext, fakeClock, type TestHolderContext } from "../../src/testing.js";
import { createHolderApp } from "../../src/web/app.js";

export { DAY, HOUR, MINUTE, T0 } from "../../src/testing.js";

export interface TestHolder {
  ctx: TestHolderContext;
  clock: ReturnType<typeof fakeClock>;
  services: HolderServices;
  /** With `push: true`: the delivery engine on the fake clock (drive it with `runDue()`). */
  delivery?: DeliveryEngine;
  mcp: HolderMcpEndpoint;
  /** http://127.0.0.1:<port> */
  origin: string;
  mcpUrl: URL;
  /** A connected 2026-07-28 client (SDK v2, stateless); closed with the holder. */
  connect(name?: string): Promise<Client>;
  /** A connected 2025-11-25 client (SDK 1.x, in a session); closed with the holder. */
  connectLegacy(name?: string): Promise<LegacyClient>;
  close(): Promise<void>;
}

export interface TestHolderOptions {
  mcp?: Partial<Omit<McpHandlerOptions, "publicUrl" | "clock" | "log">>;
  config?: Partial<HolderConfig>;
  /** Wraps the services the tools see (spies). */
  toolServices?: (services: HolderToolServices) => HolderToolServices;
  /** Offer the push profile, with a delivery engine allowed to ring loopback endpoints. */
  push?: boolean | Partial<Omit<DeliveryEngineOptions, "store" | "sealer" | "clock">>;
}

export async function startHolder(
  engine: EngineFixture,
  options: TestHolderOptions = {},
): Promise<TestHolder> {
  const clock = fakeClock();
  const ctx = await createTestHolderContext(engine.db, clock.now, {
    reset: true,
    ...(options.config === undefined ? {} : { config: options.config }),
  });
  const delivery =
    options.push === undefined || options.push === false
      ? undefined
      : createDeliveryEngine({
          store: engine.db as unknown as DeliveryEngineOptions["store"],
          sealer: ctx.sealer,
          policy: developmentPolicy(),
          clock: clock.now,
          coalesce: coalescedMatchesDoorbell,
          ...(options.push === true ? {} : options.push),
        });
  const services = createHolderServices(ctx, delivery === undefined ? {} : { push: { engine: delivery } });
  await services.matching.start();
  const toolServices: HolderToolServices = {
    intents: services.intents,
    matches: services.matching,
    offers: services.offers,
    demand: services.demand,
    ...(services.push === undefined ? {} : { push: services.push }),
  };
  const mcp = createMcpHandler(
    options.toolServices === undefined ? toolServices : options.toolServices(toolServices),
    {
      publicUrl: ctx.config.publicUrl,
      clock: clock.now,
      log: ctx.log,
      toolRateLimit: false,
      sessionRateLimit: false,
      ...options.mcp,
    },
  );
  const app = createHolderApp({
    config: ctx.config,
    services: {
      intents: services.intents,
      consent: services.consent,
      matches: services.matching,
      demand: services.demand,
      ...(services.push === undefined ? {} : { push: services.push }),
    },
    mcp,
    mailbox: ctx.mailbox,
    languages: ["sk", "cs", "en"],
    log: ctx.log,
    ...(options.mcp?.allowedHosts === undefined ? {} : { hosts: { allowedHosts: options.mcp.allowedHosts } }),
  });
  const server: ServerType = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  const mcpUrl = new URL(`${origin}/mcp`);
  const clients: { close(): Promise<void> }[] = [];
  return {
    ctx,
    clock,
    services,
    ...(delivery === undefined ? {} : { delivery }),
    mcp,
    origin,
    mcpUrl,
    async connect(name = "test-agent") {
      const client = new Client({ name, version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
      await client.connect(new StreamableHTTPClientTransport(mcpUrl));
      clients.push(client);
      return client;
    },
    async connectLegacy(name = "test-agent") {
      const client = new LegacyClient({ name, version: "1.0.0" });
      await client.connect(new LegacyTransport(mcpUrl, { fetch: scopedSignalFetch() }));
      clients.push(client);
      return client;
    },
    async close() {
      await Promise.allSettled(clients.map((client) => client.close()));
      await mcp.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        (server as { closeAllConnections?: () => void }).closeAllConnections?.();
      });
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Calling tools

/** Either era's client: both call tools the same way. */
export interface ToolCaller {
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<unknown>;
}

export async function call(
  client: ToolCaller,
  name: string,
  args: Record<string, unknown>,
): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/** The structured result of a call that must succeed; its text block is the same JSON. */
export async function ok<T = Record<string, unknown>>(
  client: ToolCaller,
  name: string,
  args: Record<string, unknown>,
): Promise<T> {
  const result = await call(client, name, args);
  if (result.isError) throw new Error(`${name} was refused: ${textOf(result)}`);
  const text = result.content[0];
  expect(text?.type).toBe("text");
  expect(JSON.parse((text as { text: string }).text)).toEqual(result.structuredContent);
  return result.structuredContent as T;
}

export interface Refusal {
  text: string;
  code: string | undefined;
  retryAfterSeconds: number | undefined;
}

/** The refusal of a call that must be refused (a tool error, `isError: true`). */
export async function refused(
  client: ToolCaller,
  name: string,
  args: Record<string, unknown>,
): Promise<Refusal> {
  const result = await call(client, name, args);
  if (!result.isError)
    throw new Error(`${name} was not refused: ${JSON.stringify(result.structuredContent)}`);
  return refusalOf(result);
}

export function refusalOf(result: CallToolResult): Refusal {
  const meta = result._meta?.[ERROR_META_KEY] as ToolErrorMeta | undefined;
  return { text: textOf(result), code: meta?.code, retryAfterSeconds: meta?.retryAfterSeconds };
}

export function textOf(result: CallToolResult): string {
  return result.content.map((block) => (block.type === "text" ? block.text : "")).join("\n");
}

// ---------------------------------------------------------------------------------------------
// The person's side and the catalogue (through the services: these are not agent actions)

export const basicPublish = (more: Record<string, unknown> = {}) => ({
  statement: "A Škoda Octavia combi, diesel, at most 120,000 km, near Bratislava",
  criteria: { category: "vehicles", make: "Škoda", model: "Octavia", fuel: "diesel", mileageMaxKm: 120_000 },
  area: { country: "SK", region: "SK-BL" },
  budget: { amount: 15_000, currency: "EUR" },
  ...more,
});

export interface Published {
  intent: { id: string; status: string; hasHiddenLimit: boolean };
  intentCode: string;
  consentUrl: string;
}

export const tokenOf = (url: string): string => url.slice(url.lastIndexOf("/") + 1);

/** Consent on the holder's page and the double opt-in click, as the person would do them. */
export async function confirmAsPerson(h: TestHolder, published: Published, email: string): Promise<void> {
  await h.services.consent.giveConsent(tokenOf(published.consentUrl), { email, accepted: true });
  const [mail] = await h.ctx.mailbox.listMailbox({ to: email, limit: 1 });
  const confirm = mail === undefined ? undefined : /\/confirm\/([0-9A-Za-z]+)/.exec(mail.text)?.[1];
  if (confirm === undefined) throw new Error("no confirmation mail");
  await h.services.consent.confirmEmail(confirm);
}

/** Publishes over MCP and confirms as the person: an active intent. */
export async function activeIntent(
  h: TestHolder,
  client: ToolCaller,
  email: string,
  args: Record<string, unknown> = basicPublish(),
): Promise<Published> {
  const published = await ok<Published>(client, "intent_publish_intent", args);
  await confirmAsPerson(h, published, email);
  return published;
}

let refCounter = 0;

/** A catalogue offer that fits `basicPublish()`. */
export function octavia(more: Partial<CatalogueOfferInput> = {}): CatalogueOfferInput {
  refCounter += 1;
  return {
    source: { kind: "catalogue", ref: `test-${refCounter}`, seller: "Autobazár Senec" },
    title: "Škoda Octavia Combi 2.0 TDI",
    description: "Well kept, full service history.",
    category: "vehicles",
    price: { amount: 13_900, currency: "EUR" },
    location: { country: "SK", region: "SK-BL" },
    url: "https://cars.example.sk/octavia",
    attributes: { make: "Škoda", model: "Octavia", year: 2019, mileageKm: 98_000, fuel: "diesel" },
    publishedAt: new Date(Date.UTC(2026, 10, 29)).toISOString(),
    ...more,
  };
}

// ---------------------------------------------------------------------------------------------
// Stored state, to show a refused call changed nothing

const TABLES = [
  "holder_intents",
  "holder_offers",
  "holder_mail",
  "holder_push",
  "delivery_subscriptions",
  "delivery_outbox",
] as const;

/** A digest of every holder table's rows (count and content), in a stable order. */
export async function stateDigest(h: TestHolder): Promise<string> {
  const hash = createHash("sha256");
  for (const table of TABLES) {
    const rows = await (h.ctx.store.db as unknown as typeof h.ctx.store.db)
      .selectFrom(table as "holder_intents")
      .selectAll()
      .orderBy("id" as never)
      .execute();
    hash.update(`${table}:${rows.length}\n`);
    for (const row of rows)
      hash.update(
        `${JSON.stringify(row, (_key, value) => (typeof value === "bigint" ? String(value) : value))}\n`,
      );
  }
  return hash.digest("hex");
}

// ---------------------------------------------------------------------------------------------
// Raw HTTP, for what a real client would never send (bad Host, junk bodies)

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
};

export const MCP_HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
};

export const MODERN_VERSION = "2026-07-28";

/**
 * The method and headers of one raw MCP 2026-07-28 POST: the standard headers (Mcp-Name from
 * params.name or params.uri) and the per-request `_meta`. `headers` override the well-formed
 * ones, undefined removing one; `version` is the one `_meta` claims.
 */
export function modernPost(
  method: string,
  params: Record<string, unknown> = {},
  options: { id?: string | number; headers?: Record<string, string | undefined>; version?: string } = {},
): { method: "POST"; headers: Record<string, string>; body: string } {
  const name = (params.name ?? params.uri) as string | undefined;
  const all: Record<string, string | undefined> = {
    ...MCP_HEADERS,
    "mcp-protocol-version": MODERN_VERSION,
    "mcp-method": method,
    ...(name === undefined ? {} : { "mcp-name": name }),
    ...options.headers,
  };
  const meta = {
    "io.modelcontextprotocol/protocolVersion": options.version ?? MODERN_VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
  };
  return {
    method: "POST",
    headers: Object.fromEntries(
      Object.entries(all).filter((entry): entry is [string, string] => entry[1] !== undefined),
    ),
    body: JSON.stringify({ jsonrpc: "2.0", id: options.id ?? 1, method, params: { _meta: meta, ...params } }),
  };
}

/** One request with node:http, so Host and every other header are exactly as given. */
export function rawRequest(
  url: URL,
  options: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      { method: options.method ?? "POST", headers: { ...options.headers }, agent: false },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: Buffer.concat(chunks).toString("utf8"),
          }),
        );
        response.on("error", reject);
      },
    );
    request.on("error", reject);
    request.end(options.body);
  });
}

/** The JSON-RPC message of a response, whether it came as JSON or as one SSE event. */
export function jsonRpcOf(response: RawResponse): {
  error?: { code: number; message: string };
  result?: unknown;
} {
  const body = response.body.trim();
  if (body.startsWith("{") || body.startsWith("[")) return JSON.parse(body);
  const data = body
    .split("\n")
    .filter((line) => line.startsWith("data:"))
    .map((line) => line.slice(5).trim())
    .filter((line) => line !== "");
  return JSON.parse(data[data.length - 1] ?? "{}");
}
