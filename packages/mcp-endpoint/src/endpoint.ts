/**
 * An MCP endpoint that serves both protocol eras on one URL, as a web-standard
 * `(Request) => Promise<Response>` any server (Hono, Deno, Bun, Workers) can mount. The holder
 * (handler.ts) and the forwarder differ only in what `register` puts on a server.
 *
 * - **Modern (2026-07-28), stateless.** A request that carries the per-request `_meta` envelope is
 *   answered by the v2 SDK's `createMcpHandler` with a fresh server from `register`: no session,
 *   nothing kept between requests, so any process behind a balancer can answer any request. The
 *   SDK validates the envelope and the routing headers (-32020/-32021/-32022), stamps `resultType`
 *   and the cache hints, answers `server/discover` and `subscriptions/listen`.
 * - **Legacy (2025-11-25, 2025-06-18), sessionful.** `initialize` opens a session in this process
 *   (legacy-sessions.ts), kept for `resources/subscribe` on the legacy GET stream. A request for a
 *   session this process does not know gets the spec's 404 and the client initializes again.
 *
 * Before either leg sees a request: shutting down (503), the Host/Origin check (DNS rebinding),
 * the method, the bounded JSON body read, the params check, and `gate` (the holder's sign-in
 * and step-up challenges, told the request's era), then admission: a place per request, held until
 * its answer is complete (post-admission.ts). Malformed requests get JSON-RPC errors with 4xx statuses (json-rpc.ts).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import {
  type AuthInfo,
  createMcpHandler as createSdkHandler,
  isLegacyRequest,
  McpServer,
  type ServerNotifier,
} from "@modelcontextprotocol/server";
import { type Logger, pino } from "pino";
import { type Admission, type AdmissionLimits, createAdmission, DEFAULT_ADMISSION } from "./admission.js";
import type { Answer } from "./answered.js";
import { jsonRpcError, paramsError, readJsonBody } from "./json-rpc.js";
import { createLegacySessions, type LegacySessionLimits, type LegacySessions } from "./legacy-sessions.js";
import { createHeaderGuard, createOriginGuard } from "./origin-guard.js";
import { admitPost, serveAdmitted } from "./post-admission.js";
import { type QuickOutcome, type QuickTools, serveQuick } from "./quick-call.js";
import {
  type CallLimit,
  createRateLimiter,
  localLimitNote,
  notedLimiter,
  type RateLimit,
  type RateVerdict,
} from "./rate-limit.js";
import {
  describeMcpRequest,
  type McpRequestTrace,
  startMcpRequestTrace,
  traceMcpRequest,
} from "./request-span.js";

/** The path both eras are served on, for the holder and the forwarder alike. */
export const MCP_PATH = "/mcp";

/** Told of every tool call: the tool, its outcome (ok, tool_error, rate_limited, failed) and seconds. */
export type ToolObserver = (tool: string, outcome: string, seconds: number) => void;

/** The limits and seams of an endpoint; every one has a default. */
export interface EndpointPolicy extends LegacySessionLimits {
  allowedHosts?: readonly string[];
  allowedOrigins?: readonly string[];
  /** Accept loopback Host/Origin for local use (default true). */
  allowLoopback?: boolean;
  /** Tool calls per client address. Default 60 at once, 5 a second. `false`: none. */
  toolRateLimit?: RateLimit | false;
  /**
   * Answer each POST with one JSON body instead of an SSE stream (both are Streamable HTTP); the
   * tools send no progress notifications, so nothing is lost. Default false (the SDK's default).
   */
  jsonResponse?: boolean;
  /** Largest accepted POST body (default 256 KiB). */
  maxBodyBytes?: number;
  /**
   * MCP requests this process serves at once (default 32) and how many more may wait their turn
   * (default 1,024); past that a request is answered 503 with Retry-After. A batch counts each
   * request in it; a place is held until the answer is complete. See post-admission.ts.
   */
  admission?: AdmissionLimits;
  /** Epoch milliseconds (idle times, rate limits). */
  clock?: () => number;
  log?: Logger;
  /** Told of every tool call (metrics): the tool, its outcome and how long it took. */
  observeToolCall?: ToolObserver;
  /** Shared limits across processes; when given, `toolRateLimit` and `sessionRateLimit` are unused. */
  sharedLimit?: SharedMcpLimit;
  /**
   * Verifies a request's bearer token and returns the SDK's AuthInfo with `extra.subject`.
   * Throwing or returning undefined leaves the request unauthenticated (intentCode only).
   */
  authenticate?: (request: Request) => Promise<AuthInfo | undefined>;
}

export type Era = "modern" | "legacy";

/** What `register` learns of the request (modern) or the session (legacy) it serves. */
export interface ServingScope {
  era: Era;
  /** The calling client's tool-call allowance (keyed on its address, else its session). */
  limit?: CallLimit;
  /** Told of every tool call (metrics). */
  observe?: ToolObserver;
  /**
   * Modern era: the one request this server answers. A stateless server needs only the surface
   * that request touches (one tool for a tools/call), so `register` may skip the rest.
   */
  focus?: RequestFocus;
}

/** What a modern request asks for: its method and, for tools/call, the tool's name. */
export interface RequestFocus {
  method: string;
  name?: string;
}

function focusOf(message: unknown): RequestFocus | undefined {
  if (typeof message !== "object" || message === null || Array.isArray(message)) return undefined;
  const { method, params } = message as { method?: unknown; params?: { name?: unknown } };
  if (typeof method !== "string") return undefined;
  const name = typeof params?.name === "string" ? params.name : undefined;
  return name === undefined ? { method } : { method, name };
}

/**
 * Limits shared by every process on the database (limits/holder-limits.ts): new legacy sessions
 * and tool calls per client key. Without it, each process keeps its own token buckets. A refusal
 * carries the limit's note, which the 429 or the tool error repeats.
 */
export type SharedMcpLimit = (bucket: "mcp.session" | "mcp.tool", key: string) => Promise<RateVerdict>;

export interface EndpointOptions<S> extends EndpointPolicy {
  /** The endpoint's public origin (its host and origin are accepted; see origin-guard.ts). */
  publicUrl: string;
  /** Reported in `server/discover` and `initialize`. */
  name: string;
  version: string;
  instructions: string;
  /** Who refuses while closing: "the <role> is shutting down". */
  role: string;
  /** The log event of a request that failed unexpectedly (default "mcp.request.failed"). */
  failedEvent?: string;
  /**
   * Wraps the modern handler once (MCP Events: `subscriptions/listen` with `eventsListChanged`);
   * the wrapper serves every modern request and is closed with the endpoint.
   */
  wrapModern?: (handler: ModernHandler) => ModernHandler;
  /** Puts the tools (and resources) on a fresh server; returns a legacy session's own state. */
  register(server: McpServer, scope: ServingScope): S;
  /**
   * Looks at a parsed request before it is served; a Response answers it instead (the holder's
   * sign-in challenge for a tool that needs a signed-in person).
   */
  gate?: (message: unknown, authInfo: AuthInfo | undefined, era: Era) => Response | undefined;
  /** Called once when the endpoint closes, before its sessions are closed. */
  onClose?: () => void;
  /**
   * Tools whose plain 2026-07-28 calls are answered on the Node request beside the SDK, with the
   * SDK's bytes (quick-call.ts); served through `McpEndpoint.quick`.
   */
  quickTools?: QuickTools;
}

export interface McpRequestInfo {
  /** The TCP peer's address, for per-client rate limits (the Hono app passes it). */
  clientAddress?: string;
  /** The client's limit key when a trusted proxy names the client (IPv6 as its /64); wins over the peer. */
  clientKey?: string;
}

export interface McpHandler {
  (request: Request, info?: McpRequestInfo): Promise<Response>;
  /** Closes every legacy session and the modern leg's open streams. */
  close(): Promise<void>;
  /** Closes legacy sessions idle for longer than `sessionIdleMs`; returns how many. */
  sweep(): Promise<number>;
  /** Open legacy sessions in this process. */
  readonly sessionCount: number;
}

export interface McpEndpoint<S> extends McpHandler {
  /** The open legacy sessions, least recently used first. */
  sessions: LegacySessions<S>["sessions"];
  /** Change notifications for modern `subscriptions/listen` streams. */
  readonly notify: ServerNotifier;
  /** The requests served, waiting and refused now (for /metrics). */
  readonly admission: Admission;
  /**
   * With `quickTools`: serves a Node request that is a plain call of one of them
   * (quick-call.ts), or says to serve it as usual, with the body it read.
   */
  readonly quick?: (
    req: IncomingMessage,
    res: ServerResponse,
    clientKey: string | undefined,
    onAnswer: () => void,
  ) => Promise<QuickOutcome>;
}

/** A POST whose body is read and era known. */
interface ParsedPost {
  request: Request;
  body: unknown;
  era: Era;
  authInfo: AuthInfo | undefined;
  clientKey: string | undefined;
}

/** The part of the SDK's handler the endpoint calls for a modern request. */
export interface ModernHandler {
  fetch(request: Request, options?: { authInfo?: AuthInfo; parsedBody?: unknown }): Promise<Response>;
  close(): void | Promise<void>;
}

const DEFAULT_TOOL_LIMIT: RateLimit = { capacity: 60, refillPerSecond: 5 };
/** `resources/read` and the lists of the modern era: the same for every caller of the holder. */
const PUBLIC_LISTS = { ttlMs: 300_000, cacheScope: "public" } as const;

// Just over 150 lines: the era dispatch, admission and the limits share one closure, kept whole
// when it moved from the holder so both eras keep one reading order.
export function createMcpEndpoint<S>(options: EndpointOptions<S>): McpEndpoint<S> {
  const clock = options.clock ?? Date.now;
  const log = options.log ?? pino({ level: "silent" });
  const guard = createOriginGuard(options);
  const maxBodyBytes = options.maxBodyBytes ?? 256 * 1024;
  const admission = createAdmission(options.admission ?? DEFAULT_ADMISSION);
  const toolLimit = options.toolRateLimit ?? DEFAULT_TOOL_LIMIT;
  const shared = options.sharedLimit;
  const limiter =
    shared !== undefined || toolLimit === false
      ? undefined
      : notedLimiter(createRateLimiter(toolLimit, { clock }), localLimitNote("toolRateLimit", toolLimit));
  function limitFor(clientKey: string): CallLimit | undefined {
    if (shared !== undefined) return () => shared("mcp.tool", clientKey);
    if (limiter !== undefined) return () => limiter(clientKey);
    return undefined;
  }
  const failedEvent = options.failedEvent ?? "mcp.request.failed";
  let closed = false;

  /** A fresh server: the same tools for both eras, identity and instructions for discover. */
  function newServer(scope: ServingScope): { server: McpServer; state: S } {
    const server = new McpServer(
      { name: options.name, version: options.version },
      {
        instructions: options.instructions,
        cacheHints: { "tools/list": PUBLIC_LISTS, "server/discover": PUBLIC_LISTS },
      },
    );
    return { server, state: options.register(server, scope) };
  }
  const scopeOf = (era: Era, clientKey: string, focus?: RequestFocus): ServingScope => {
    const limit = limitFor(clientKey);
    return {
      era,
      ...(focus === undefined ? {} : { focus }),
      ...(limit === undefined ? {} : { limit }),
      ...(options.observeToolCall === undefined ? {} : { observe: options.observeToolCall }),
    };
  };

  // The client key and focus of each modern request, for the factory (which sees only the Request).
  const requests = new WeakMap<Request, { clientKey: string; focus: RequestFocus | undefined }>();
  const modern = createSdkHandler(
    ({ requestInfo }) => {
      const seen = requestInfo && requests.get(requestInfo);
      return newServer(scopeOf("modern", seen?.clientKey ?? "anonymous", seen?.focus)).server;
    },
    {
      legacy: "reject",
      maxRequestBodySize: maxBodyBytes,
      ...(options.jsonResponse === true ? { responseMode: "json" as const } : {}),
      onerror: (error) =>
        log.debug({ event: "mcp.modern.refused", error: error.name }, error.message.slice(0, 300)),
    },
  );
  const served: ModernHandler = options.wrapModern?.(modern) ?? modern;
  const legacy = createLegacySessions<S>({
    ...options,
    ...(shared === undefined ? {} : { sharedSessionLimit: (key: string) => shared("mcp.session", key) }),
    clock,
    log,
    open: (clientKey) => newServer(scopeOf("legacy", clientKey)),
  });

  async function authInfoOf(request: Request): Promise<AuthInfo | undefined> {
    if (options.authenticate === undefined) return undefined;
    try {
      return await options.authenticate(request);
    } catch {
      return undefined;
    }
  }

  /** A parsed POST, to the legacy sessions or the modern handler. */
  async function serve({ request, body, era, authInfo, clientKey }: ParsedPost): Promise<Answer> {
    if (era === "legacy") {
      // The modern leg checks params itself (and answers a 2025-only method with 404 first).
      const badParams = paramsError(body);
      if (badParams !== undefined) return { response: badParams, done: () => {} };
      return await legacy.handle(request, body, { authInfo, clientKey });
    }
    requests.set(request, { clientKey: clientKey ?? "anonymous", focus: focusOf(body) });
    const response = await served.fetch(request, {
      parsedBody: body,
      ...(authInfo === undefined ? {} : { authInfo }),
    });
    return { response, done: () => {} };
  }

  /** Each POST in its span when an OpenTelemetry SDK is registered (request-span.ts). */
  function handle(request: Request, info: McpRequestInfo = {}): Promise<Response> {
    const traced = startMcpRequestTrace(request);
    if (traced === undefined) return respond(request, info);
    return traceMcpRequest(traced, () => respond(request, info, traced));
  }

  async function respond(
    request: Request,
    info: McpRequestInfo,
    traced?: McpRequestTrace,
  ): Promise<Response> {
    if (closed) {
      return jsonRpcError(503, -32000, `the ${options.role} is shutting down`, { "retry-after": "5" });
    }
    const refused = guard(request);
    if (refused !== undefined) return jsonRpcError(403, -32000, refused);
    const method = request.method;
    if (method !== "POST" && method !== "GET" && method !== "DELETE") {
      return jsonRpcError(405, -32000, "Method not allowed: use POST (GET and DELETE for 2025 sessions)", {
        allow: "GET, POST, DELETE",
      });
    }
    try {
      const authInfo = await authInfoOf(request);
      const clientKey =
        info.clientKey ?? (info.clientAddress === undefined ? undefined : `addr:${info.clientAddress}`);
      if (method !== "POST")
        return (await legacy.handle(request, undefined, { authInfo, clientKey })).response;
      const body = await readJsonBody(request, maxBodyBytes);
      if (!body.ok) return body.response;
      const era: Era = (await isLegacyRequest(request, body.value, { maxRequestBodySize: maxBodyBytes }))
        ? "legacy"
        : "modern";
      if (traced !== undefined) describeMcpRequest(traced, request, body.value, era);
      const gated = options.gate?.(body.value, authInfo, era);
      if (gated !== undefined) return gated;
      // Only once the body is in: a client that sends it slowly holds no place.
      const admitted = await admitPost(admission, options.role, body.value);
      if ("refusal" in admitted) return admitted.refusal;
      return await serveAdmitted(admitted, { request, body: body.value, era, authInfo, clientKey }, serve);
    } catch (error) {
      if (request.signal.aborted) {
        // The client hung up (mid-body, say): its request failed, this server did not. 499 is
        // nginx's "client closed request"; nobody reads it, the access log counts it apart.
        log.debug({ event: "mcp.request.client_closed" }, "the client closed the request");
        return new Response(null, { status: 499 });
      }
      log.error(
        { event: failedEvent, error: error instanceof Error ? error.name : typeof error },
        error instanceof Error ? error.message.slice(0, 300) : "an MCP request failed",
      );
      return jsonRpcError(500, -32603, "Internal error");
    }
  }

  const { quickTools } = options;
  const quick =
    quickTools === undefined || quickTools.size === 0
      ? undefined
      : (() => {
          const hostCheck = createHeaderGuard(options);
          const context = {
            tools: quickTools,
            admission,
            hostRefusal: hostCheck,
            gated: (message: unknown) => options.gate?.(message, undefined, "modern") !== undefined,
            closed: () => closed,
            scope: (clientKey: string) => scopeOf("modern", clientKey),
            serverInfo: { name: options.name, version: options.version },
          };
          return (
            req: IncomingMessage,
            res: ServerResponse,
            clientKey: string | undefined,
            onAnswer: () => void,
          ) => serveQuick(context, req, res, clientKey, onAnswer);
        })();

  const endpoint = handle as McpEndpoint<S>;
  Object.defineProperties(endpoint, {
    quick: { value: quick },
    close: {
      value: async () => {
        closed = true;
        options.onClose?.();
        if (served !== modern) await served.close();
        await modern.close();
        await legacy.close();
      },
    },
    sweep: { value: legacy.sweep },
    sessionCount: { get: () => legacy.size },
    sessions: { value: legacy.sessions },
    notify: { value: modern.notify },
    admission: { value: admission },
  });
  return endpoint;
}
