/**
 * An MCP endpoint in session mode: Streamable HTTP with the official SDK's web-standard transport,
 * as a `(Request) => Promise<Response>` that any web-standard server (Hono, Deno, Bun, Workers) can
 * mount. The holder (handler.ts) and the forwarder (forwarder/mcp-endpoint.ts) differ only in what
 * `register` puts on each session's server.
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
 * 4xx statuses (json-rpc.ts); tool refusals are tool results with `isError: true` (tool.ts).
 */
import { randomBytes } from "node:crypto";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { type Logger, pino } from "pino";
import { jsonRpcError, paramsError, readJsonBody } from "./json-rpc.js";
import { createOriginGuard } from "./origin-guard.js";
import { createRateLimiter, type RateLimit, type RateLimiter } from "./rate-limit.js";

/** The limits and seams of a session endpoint; every one has a default. */
export interface SessionEndpointPolicy {
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

/** What `register` gets for one new session: the tool-call limiter and the session's client key. */
export interface SessionSetup {
  limiter?: RateLimiter;
  clientKey: () => string;
}

export interface SessionEndpointOptions<S> extends SessionEndpointPolicy {
  /** The endpoint's public origin (its host and origin are accepted; see origin-guard.ts). */
  publicUrl: string;
  /** Reported in `initialize`. */
  name: string;
  version: string;
  instructions: string;
  /** Who refuses while closing: "the <role> is shutting down". */
  role: string;
  /** The log event of a request that failed unexpectedly (default "mcp.request.failed"). */
  failedEvent?: string;
  /** Puts the tools (and resources) on a new session's server; returns the session's own state. */
  register(server: McpServer, session: SessionSetup): S;
  /** Called once when the endpoint closes, before its sessions are closed. */
  onClose?: () => void;
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

export interface OpenSession<S> {
  readonly server: McpServer;
  /** What `register` returned for this session. */
  readonly state: S;
}

export interface SessionEndpoint<S> extends McpHandler {
  /** The open sessions, least recently used first. */
  sessions(): IterableIterator<OpenSession<S>>;
}

interface Session<S> extends OpenSession<S> {
  readonly id: string;
  readonly transport: WebStandardStreamableHTTPServerTransport;
  lastSeen: number;
}

const DEFAULT_TOOL_LIMIT: RateLimit = { capacity: 60, refillPerSecond: 5 };
const DEFAULT_SESSION_LIMIT: RateLimit = { capacity: 30, refillPerSecond: 0.2 };

export function createSessionEndpoint<S>(options: SessionEndpointOptions<S>): SessionEndpoint<S> {
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
  /** Map order is least recently used first: a request moves its session to the end. */
  const sessions = new Map<string, Session<S>>();
  let closed = false;

  const sweepTimer = setInterval(() => void sweep(), Math.min(idleMs, 60_000));
  sweepTimer.unref();

  async function closeSession(session: Session<S>): Promise<void> {
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
      { name: options.name, version: options.version },
      { instructions: options.instructions },
    );
    const state = options.register(server, {
      ...(toolLimiter === undefined ? {} : { limiter: toolLimiter }),
      clientKey: () => clientKey,
    });
    const session: Session<S> = {
      id,
      server,
      state,
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
    if (closed) {
      return jsonRpcError(503, -32000, `the ${options.role} is shutting down`, { "retry-after": "5" });
    }
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
        {
          event: options.failedEvent ?? "mcp.request.failed",
          error: error instanceof Error ? error.name : typeof error,
        },
        error instanceof Error ? error.message.slice(0, 300) : "an MCP request failed",
      );
      return jsonRpcError(500, -32603, "Internal error");
    }
  }

  const endpoint = handle as SessionEndpoint<S>;
  Object.defineProperties(endpoint, {
    close: {
      value: async () => {
        closed = true;
        clearInterval(sweepTimer);
        options.onClose?.();
        await Promise.all([...sessions.values()].map(closeSession));
      },
    },
    sweep: { value: sweep },
    sessionCount: { get: () => sessions.size },
    sessions: { value: () => sessions.values() },
  });
  return endpoint;
}
