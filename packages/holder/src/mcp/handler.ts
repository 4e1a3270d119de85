/**
 * The holder's MCP endpoint: Streamable HTTP with the official SDK's web-standard transport, as a
 * `(Request) => Promise<Response>` that any web-standard server (Hono, Deno, Bun, Workers) can mount.
 *
 * Session mode. An `initialize` request opens a session (its own `McpServer` and transport, found
 * again by the `Mcp-Session-Id` header); every later request of the session reuses them, so a call
 * costs one HTTP round trip and no set-up (stateless mode builds a server per request and measured
 * ~2.7× slower). Sessions cannot leak: idle ones are closed after `sessionIdleMs`, at most
 * `maxSessions` exist (the least recently used is closed to make room), new sessions per client are
 * rate limited, and DELETE closes one. Nothing per call is added to a long-lived object: the SDK
 * makes one AbortController per request and drops it with the request.
 *
 * Before the transport sees a request: the Host/Origin check (DNS rebinding), the body size limit
 * and, for a request without a session, the JSON parse. Malformed requests get JSON-RPC errors with
 * 4xx statuses; tool refusals are tool results with `isError: true` (see tools.ts).
 */
import { randomBytes } from "node:crypto";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { ClientRequestSchema, isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { type Logger, pino } from "pino";
import type { Principal } from "../domain/types.js";
import { createOriginGuard } from "./origin-guard.js";
import { createRateLimiter, type RateLimit, type RateLimiter } from "./rate-limit.js";
import { demandInput } from "./schemas.js";
import {
  newSessionSubscriptions,
  registerSubscriptionResource,
  type SessionSubscriptions,
  SUBSCRIPTION_URI_PREFIX,
} from "./subscription-resource.js";
import { type HolderToolServices, registerHolderTools } from "./tools.js";

export interface McpHandlerOptions {
  /** The holder's public origin (its host and origin are accepted; see origin-guard.ts). */
  publicUrl: string;
  /** Reported in `initialize` (default "doorbell-holder"). */
  name?: string;
  version?: string;
  /** Short instructions for the agent, sent in `initialize`. */
  instructions?: string;
  allowedHosts?: readonly string[];
  allowedOrigins?: readonly string[];
  /** Accept loopback Host/Origin for local use (default true). */
  allowLoopback?: boolean;
  /** Tool calls per client (address, else session). Default 60 at once, 5 a second. `false`: none. */
  toolRateLimit?: RateLimit | false;
  /** New sessions per client address. Default 30 at once, one every 5 s. `false`: none. */
  sessionRateLimit?: RateLimit | false;
  /** Default 1,000. */
  maxSessions?: number;
  /** Default 30 minutes. */
  sessionIdleMs?: number;
  /**
   * Answer each POST with one JSON body instead of an SSE stream (both are Streamable HTTP). The
   * tools send no progress notifications, so nothing is lost; default false (the SDK's default).
   */
  jsonResponse?: boolean;
  /**
   * Push profile §8.2: `nextCheckAfter` in intent_list_matches is this far ahead (default and
   * minimum 15 minutes, the profile's floor for polling one intent). Only with the push tools.
   */
  pullIntervalMs?: number;
  /** Largest accepted POST body (default 256 KiB). */
  maxBodyBytes?: number;
  /** Epoch milliseconds (idle times, rate limits). */
  clock?: () => number;
  log?: Logger;
  /**
   * The OAuth seam (a later issue): verifies a request's bearer token and returns the SDK's
   * AuthInfo with `extra.subject`, which the buyer tools turn into an OAuth principal. Throwing
   * or returning undefined leaves the request unauthenticated (intentCode only).
   */
  authenticate?: (request: Request) => Promise<AuthInfo | undefined>;
}

export interface McpRequestInfo {
  /** The TCP peer's address, for per-client rate limits (the Hono app passes it). */
  clientAddress?: string;
}

export interface McpHandler {
  (request: Request, info?: McpRequestInfo): Promise<Response>;
  /** Closes every session and stops the idle sweep. */
  close(): Promise<void>;
  /** Closes sessions idle for longer than `sessionIdleMs`; returns how many. */
  sweep(): Promise<number>;
  readonly sessionCount: number;
}

interface Session {
  readonly id: string;
  readonly server: McpServer;
  readonly transport: WebStandardStreamableHTTPServerTransport;
  /** Push subscriptions this session made, and the ones it watches as resources (§8.3). */
  readonly subscriptions: SessionSubscriptions;
  lastSeen: number;
}

/** Push profile §8.2: an agent should not poll one intent more often than every 15 minutes. */
export const PULL_FLOOR_MS = 15 * 60_000;
const DEFAULT_TOOL_LIMIT: RateLimit = { capacity: 60, refillPerSecond: 5 };
const DEFAULT_SESSION_LIMIT: RateLimit = { capacity: 30, refillPerSecond: 0.2 };

const DEFAULT_INSTRUCTIONS =
  "An Isto Intents holder (MCP binding 0.1, consent-link profile). Publish what a person wants to buy with intent_publish_intent, " +
  "give the person the consentUrl to confirm it themselves, keep the intentCode, and poll intent_list_matches with since. " +
  "Results come from a market aggregator and may be incomplete.";

/** A JSON-RPC error outside any session (the transport answers in the same shape inside one). */
export function jsonRpcError(
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

type BodyRead = { ok: true; value: unknown } | { ok: false; response: Response };

async function readJsonBody(request: Request, maxBytes: number): Promise<BodyRead> {
  const tooLarge = (): BodyRead => ({
    ok: false,
    response: jsonRpcError(413, -32000, `the request body is larger than ${maxBytes} bytes`),
  });
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > maxBytes) return tooLarge();
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (request.body !== null) {
    const reader = request.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel().catch(() => {});
        return tooLarge();
      }
      chunks.push(value);
    }
  }
  try {
    const text = new TextDecoder("utf-8", { fatal: true }).decode(Buffer.concat(chunks));
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false, response: jsonRpcError(400, -32700, "Parse error: the body is not UTF-8 JSON") };
  }
}

/** The SDK's schema of each client request method, to check params before the SDK does. */
const REQUEST_SCHEMAS = new Map(
  ClientRequestSchema.options.map((schema) => [schema.shape.method.value, schema]),
);

/**
 * Why a request's params are invalid, or undefined. The SDK answers such a request with -32603
 * (internal error) and the validator's dump; JSON-RPC calls it -32602 (invalid params), and says so
 * here in a line. Unknown methods are left to the SDK (-32601).
 */
export function invalidParams(message: unknown): string | undefined {
  if (typeof message !== "object" || message === null || Array.isArray(message)) return undefined;
  const { method, id } = message as { method?: unknown; id?: unknown };
  if (typeof method !== "string" || id === undefined) return undefined;
  const schema = REQUEST_SCHEMAS.get(method as never);
  if (schema === undefined) return undefined;
  const checked = schema.safeParse(message);
  if (checked.success) return undefined;
  const issues = checked.error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.map(String).join(".") || "params"}: ${issue.message}`);
  return `Invalid params for ${method}: ${issues.join("; ")}`;
}

function paramsError(body: unknown): Response | undefined {
  const messages = Array.isArray(body) ? body : [body];
  for (const message of messages) {
    const problem = invalidParams(message);
    if (problem === undefined) continue;
    if (Array.isArray(body)) return jsonRpcError(400, -32602, problem);
    const id = (message as { id: unknown }).id;
    return new Response(JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32602, message: problem } }), {
      status: 200,
      headers: { "content-type": "application/json" },
    });
  }
  return undefined;
}

export function createMcpHandler(services: HolderToolServices, options: McpHandlerOptions): McpHandler {
  const clock = options.clock ?? Date.now;
  const log = options.log ?? pino({ level: "silent" });
  const guard = createOriginGuard(options);
  const maxSessions = Math.max(1, options.maxSessions ?? 1000);
  const idleMs = options.sessionIdleMs ?? 30 * 60_000;
  const maxBodyBytes = options.maxBodyBytes ?? 256 * 1024;
  const toolLimit = options.toolRateLimit ?? DEFAULT_TOOL_LIMIT;
  const sessionLimit = options.sessionRateLimit ?? DEFAULT_SESSION_LIMIT;
  const toolLimiter: RateLimiter | undefined =
    toolLimit === false ? undefined : createRateLimiter(toolLimit, { clock });
  const sessionLimiter: RateLimiter | undefined =
    sessionLimit === false ? undefined : createRateLimiter(sessionLimit, { clock });
  const demandSchema = demandInput(services.demand.grid());
  /** Map order is least recently used first: a request moves its session to the end. */
  const sessions = new Map<string, Session>();
  let closed = false;

  const sweepTimer = setInterval(() => void sweep(), Math.min(idleMs, 60_000));
  sweepTimer.unref();
  const pullIntervalMs = Math.max(options.pullIntervalMs ?? PULL_FLOOR_MS, PULL_FLOOR_MS);
  const nextCheckAfter = () => new Date(clock() + pullIntervalMs).toISOString();
  // §8.3: tell the sessions that watch a subscription that it changed.
  const stopListening = services.push?.onChange((ids) => {
    for (const session of sessions.values()) {
      for (const id of ids) {
        if (!session.subscriptions.watched.has(id)) continue;
        session.server.server
          .sendResourceUpdated({ uri: `${SUBSCRIPTION_URI_PREFIX}${id}` })
          .catch(() => session.subscriptions.watched.delete(id));
      }
    }
  });

  async function closeSession(session: Session): Promise<void> {
    sessions.delete(session.id);
    try {
      await session.server.close();
    } catch (error) {
      log.warn(
        { event: "mcp.session.close_failed", error: (error as Error).name },
        "a session did not close cleanly",
      );
    }
  }

  async function sweep(): Promise<number> {
    const cutoff = clock() - idleMs;
    const idle = [...sessions.values()].filter((session) => session.lastSeen <= cutoff);
    await Promise.all(idle.map(closeSession));
    return idle.length;
  }

  async function openSession(request: Request, info: McpRequestInfo, body: unknown): Promise<Response> {
    const address = info.clientAddress;
    const verdict = sessionLimiter?.take(address === undefined ? "anonymous" : `addr:${address}`);
    if (verdict !== undefined && !verdict.ok) {
      return jsonRpcError(
        429,
        -32000,
        `too many new sessions from this client; try again in ${verdict.retryAfterSeconds} s`,
        { "retry-after": String(verdict.retryAfterSeconds) },
      );
    }
    await sweep();
    while (sessions.size >= maxSessions) {
      const oldest = sessions.values().next();
      if (oldest.done) break;
      await closeSession(oldest.value);
    }

    const id = randomBytes(18).toString("base64url");
    const clientKey = address === undefined ? `session:${id}` : `addr:${address}`;
    const server = new McpServer(
      { name: options.name ?? "doorbell-holder", version: options.version ?? "0.1.0" },
      { instructions: options.instructions ?? DEFAULT_INSTRUCTIONS },
    );
    const subscriptions = newSessionSubscriptions();
    registerHolderTools(server, {
      services,
      demandSchema,
      ...(toolLimiter === undefined ? {} : { limiter: toolLimiter }),
      clientKey: () => clientKey,
      ...(services.push === undefined
        ? {}
        : {
            nextCheckAfter,
            onSubscribed: (subscriptionId: string, principal: Principal) => {
              subscriptions.own.set(subscriptionId, principal);
            },
          }),
      log,
    });
    if (services.push !== undefined) registerSubscriptionResource(server, services.push, subscriptions);
    const session: Session = {
      id,
      server,
      subscriptions,
      transport: new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => id,
        onsessioninitialized: () => {
          sessions.set(id, session);
        },
        maxRequestBodySize: maxBodyBytes,
        enableJsonResponse: options.jsonResponse === true,
      }),
      lastSeen: clock(),
    };
    session.transport.onclose = () => {
      if (sessions.get(id) === session) sessions.delete(id);
    };
    await server.connect(session.transport);
    const response = await session.transport.handleRequest(request, {
      parsedBody: body,
      ...(await authInfoOf(request)),
    });
    // A refused initialize (wrong Accept header, bad message) leaves no session behind.
    if (!sessions.has(id)) await closeSession(session);
    else log.debug({ event: "mcp.session.opened", sessions: sessions.size }, "MCP session opened");
    return response;
  }

  async function authInfoOf(request: Request): Promise<{ authInfo?: AuthInfo }> {
    if (options.authenticate === undefined) return {};
    try {
      const authInfo = await options.authenticate(request);
      return authInfo === undefined ? {} : { authInfo };
    } catch {
      return {};
    }
  }

  async function handle(request: Request, info: McpRequestInfo = {}): Promise<Response> {
    if (closed) return jsonRpcError(503, -32000, "the holder is shutting down", { "retry-after": "5" });
    const refused = guard(request);
    if (refused !== undefined) return jsonRpcError(403, -32000, refused);
    const method = request.method;
    if (method !== "POST" && method !== "GET" && method !== "DELETE") {
      return jsonRpcError(405, -32000, "Method not allowed: use POST, GET or DELETE", {
        allow: "GET, POST, DELETE",
      });
    }
    const sessionId = request.headers.get("mcp-session-id");
    try {
      if (sessionId !== null) {
        const session = sessions.get(sessionId);
        if (session === undefined) {
          return jsonRpcError(
            404,
            -32001,
            "Session not found: it ended or never existed; send initialize again",
          );
        }
        sessions.delete(sessionId);
        sessions.set(sessionId, session);
        session.lastSeen = clock();
        if (method !== "POST")
          return await session.transport.handleRequest(request, await authInfoOf(request));
        const body = await readJsonBody(request, maxBodyBytes);
        if (!body.ok) return body.response;
        const badParams = paramsError(body.value);
        if (badParams !== undefined) return badParams;
        return await session.transport.handleRequest(request, {
          parsedBody: body.value,
          ...(await authInfoOf(request)),
        });
      }
      if (method !== "POST") {
        return jsonRpcError(400, -32000, "Bad Request: no Mcp-Session-Id header; send initialize first");
      }
      const body = await readJsonBody(request, maxBodyBytes);
      if (!body.ok) return body.response;
      if (!isInitializeRequest(body.value)) {
        return jsonRpcError(400, -32000, "Bad Request: no Mcp-Session-Id header; send initialize first");
      }
      return await openSession(request, info, body.value);
    } catch (error) {
      log.error(
        { event: "mcp.request.failed", error: error instanceof Error ? error.name : typeof error },
        error instanceof Error ? error.message.slice(0, 300) : "an MCP request failed",
      );
      return jsonRpcError(500, -32603, "Internal error");
    }
  }

  const handler = handle as McpHandler;
  Object.defineProperties(handler, {
    close: {
      value: async () => {
        closed = true;
        clearInterval(sweepTimer);
        stopListening?.();
        await Promise.all([...sessions.values()].map(closeSession));
      },
    },
    sweep: { value: sweep },
    sessionCount: { get: () => sessions.size },
  });
  return handler;
}
