/**
 * The 2025-era leg of the endpoint: Streamable HTTP sessions with the v2 SDK's web-standard
 * transport. `initialize` opens a session (its own server and transport, found again by the
 * `Mcp-Session-Id` header); later requests reuse them. Kept sessionful because 2025 clients hear
 * `resources/subscribe` updates only on a session's GET stream.
 *
 * Sessions live in this process's memory, so they are bounded against a flood:
 * - at most `maxSessions` in all and `maxSessionsPerClient` per client key (an address, IPv6 by /64);
 * - new sessions per client are rate limited;
 * - idle ones close after `sessionIdleMs`;
 * - when the table is full, the least recently used session of the client holding the most
 *   sessions makes room, so a flood evicts its own sessions before a quiet client's.
 * A request for a session this process does not know (it ended, or another process opened it)
 * gets 404, and the client initializes again (2025-11-25 transports, "Session Management").
 *
 * A session's requests keep their admission places until answered (session-work.ts): a session
 * that ends (DELETE, idle, evicted) is forgotten at once but closes once its answers are out.
 */
import { randomBytes } from "node:crypto";
import {
  type AuthInfo,
  isInitializeRequest,
  type McpServer,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import type { Logger } from "pino";
import type { Answer } from "./answered.js";
import { jsonRpcError, requestsIn } from "./json-rpc.js";
import {
  createRateLimiter,
  localLimitNote,
  notedLimiter,
  type RateLimit,
  type RateVerdict,
} from "./rate-limit.js";
import { createSessionWork, type SessionWork } from "./session-work.js";

export interface LegacySessionLimits {
  /** New sessions per client address. Default 30 at once, one every 5 s. `false`: none. */
  sessionRateLimit?: RateLimit | false;
  /** Default 1,000. */
  maxSessions?: number;
  /** Default 20. */
  maxSessionsPerClient?: number;
  /** Default 30 minutes. */
  sessionIdleMs?: number;
}

export interface OpenSession<S> {
  readonly server: McpServer;
  /** What `register` returned for this session. */
  readonly state: S;
}

export interface LegacySessions<S> {
  handle(
    request: Request,
    body: unknown,
    caller: { authInfo: AuthInfo | undefined; clientKey: string | undefined },
  ): Promise<Answer>;
  /** The open sessions, least recently used first. */
  sessions(): IterableIterator<OpenSession<S>>;
  sweep(): Promise<number>;
  close(): Promise<void>;
  readonly size: number;
}

interface Session<S> extends OpenSession<S> {
  readonly id: string;
  readonly clientKey: string;
  readonly transport: WebStandardStreamableHTTPServerTransport;
  readonly work: SessionWork;
  lastSeen: number;
}

/** An answer that ends nothing when done: no request in it is the session's to track. */
const untracked = (response: Response): Answer => ({ response, done: () => {} });

/** One POST in a session: its requests are tracked until the endpoint says they are answered. */
async function exchange<S>(
  session: Session<S>,
  request: Request,
  body: unknown,
  authInfo: AuthInfo | undefined,
): Promise<Answer> {
  const ids = requestsIn(body).map((message) => message.id);
  const clash = session.work.clash(ids);
  if (clash !== undefined) {
    return untracked(
      jsonRpcError(
        400,
        -32600,
        `Invalid Request: request id ${JSON.stringify(clash)} is already in use in this session; give every request its own id`,
      ),
    );
  }
  const kept = session.work.withoutCancellations(body);
  if (kept === undefined) return untracked(new Response(null, { status: 202 }));
  const done = session.work.begin(ids);
  try {
    const response = await session.transport.handleRequest(request, {
      parsedBody: kept,
      ...(authInfo === undefined ? {} : { authInfo }),
    });
    return { response, done };
  } catch (error) {
    done();
    throw error;
  }
}

const DEFAULT_SESSION_LIMIT: RateLimit = { capacity: 30, refillPerSecond: 0.2 };

// Longer than 150 lines: one closure owns the session table, its sweep timer and the per-client
// limits, and every method reads or changes them together; it moved whole from the holder, and
// the next step is a small state object passed to module-level functions.
export function createLegacySessions<S>(
  options: LegacySessionLimits & {
    clock: () => number;
    log: Logger;
    maxBodyBytes?: number;
    jsonResponse?: boolean;
    /** New sessions per client key, counted across processes (instead of `sessionRateLimit`). */
    sharedSessionLimit?: (clientKey: string) => Promise<RateVerdict>;
    open(clientKey: string): { server: McpServer; state: S };
  },
): LegacySessions<S> {
  const { clock, log } = options;
  const maxSessions = Math.max(1, options.maxSessions ?? 1000);
  const perClient = Math.max(1, options.maxSessionsPerClient ?? 20);
  const idleMs = options.sessionIdleMs ?? 30 * 60_000;
  const limit = options.sessionRateLimit ?? DEFAULT_SESSION_LIMIT;
  const sessionLimiter =
    options.sharedSessionLimit !== undefined || limit === false
      ? undefined
      : notedLimiter(createRateLimiter(limit, { clock }), localLimitNote("sessionRateLimit", limit));
  const takeSession = async (key: string): Promise<RateVerdict | undefined> =>
    options.sharedSessionLimit !== undefined ? options.sharedSessionLimit(key) : sessionLimiter?.(key);
  /** Map order is least recently used first: a request moves its session to the end. */
  const sessions = new Map<string, Session<S>>();
  /** Open sessions per client key. */
  const perKey = new Map<string, Set<Session<S>>>();
  /** Places held by sessions being opened (their initialize not yet answered), in all and per key. */
  let opening = 0;
  const openingPerKey = new Map<string, number>();
  /** Sessions forgotten but not yet closed: their last answers are still being worked out. */
  const ending = new Set<Session<S>>();

  const sweepTimer = setInterval(() => void sweep(), Math.min(idleMs, 60_000));
  sweepTimer.unref();

  function forget(session: Session<S>): void {
    if (sessions.get(session.id) === session) sessions.delete(session.id);
    const own = perKey.get(session.clientKey);
    own?.delete(session);
    if (own?.size === 0) perKey.delete(session.clientKey);
  }

  async function shut(session: Session<S>): Promise<void> {
    ending.delete(session);
    try {
      await session.server.close();
    } catch (error) {
      log.warn(
        { event: "mcp.session.close_failed", error: (error as Error).name },
        "a session did not close cleanly",
      );
    }
  }

  /**
   * Forgets the session now (new requests get 404) and closes it: at once if nothing runs in it,
   * else once its last answer is out (whoever asked does not wait for that).
   */
  async function closeSession(session: Session<S>): Promise<void> {
    forget(session);
    if (session.work.busy) {
      ending.add(session);
      session.work.whenIdle(() => void shut(session));
      return;
    }
    await shut(session);
  }

  /** Forgets every idle session now; the promises settle as they close. */
  function closeIdle(): Promise<void>[] {
    const cutoff = clock() - idleMs;
    return [...sessions.values()].filter((session) => session.lastSeen <= cutoff).map(closeSession);
  }

  async function sweep(): Promise<number> {
    const closing = closeIdle();
    await Promise.all(closing);
    return closing.length;
  }

  /** The least recently used session of the client with the most sessions. */
  function evictionVictim(): Session<S> | undefined {
    let largest: Set<Session<S>> | undefined;
    for (const own of perKey.values()) if (largest === undefined || own.size > largest.size) largest = own;
    if (largest === undefined) return undefined;
    for (const session of sessions.values()) if (largest.has(session)) return session;
    return undefined;
  }

  /**
   * Makes room for one more session of `clientKey` and holds that place until `release`, in one
   * synchronous step: concurrent initializes cannot each see the same free place. The places of
   * sessions still being opened count as taken. Undefined when every place is held by an opening
   * session and none can be evicted. The sessions it evicts are forgotten at once and close in
   * `closing`.
   */
  function reservePlace(clientKey: string): { closing: Promise<void>[]; release: () => void } | undefined {
    const closing = closeIdle();
    const own = perKey.get(clientKey);
    const openingOwn = () => openingPerKey.get(clientKey) ?? 0;
    while (own !== undefined && own.size > 0 && own.size + openingOwn() >= perClient) {
      const oldest = [...sessions.values()].find((session) => own.has(session));
      if (oldest === undefined) break;
      closing.push(closeSession(oldest));
    }
    if (openingOwn() >= perClient) return undefined;
    while (sessions.size + opening >= maxSessions) {
      const victim = evictionVictim();
      if (victim === undefined) return undefined;
      closing.push(closeSession(victim));
    }
    opening++;
    openingPerKey.set(clientKey, openingOwn() + 1);
    let held = true;
    const release = () => {
      if (!held) return;
      held = false;
      opening--;
      const left = openingOwn() - 1;
      if (left === 0) openingPerKey.delete(clientKey);
      else openingPerKey.set(clientKey, left);
    };
    return { closing, release };
  }

  async function openSession(
    request: Request,
    body: unknown,
    authInfo: AuthInfo | undefined,
    address: string | undefined,
  ): Promise<Response> {
    const verdict = await takeSession(address ?? "anonymous");
    if (verdict !== undefined && !verdict.ok) {
      return jsonRpcError(
        429,
        -32000,
        `too many new sessions from this client; try again in ${verdict.retryAfterSeconds} s.${verdict.limit === undefined ? "" : ` ${verdict.limit.hint}`}`,
        { "retry-after": String(verdict.retryAfterSeconds) },
      );
    }
    const id = randomBytes(18).toString("base64url");
    const clientKey = address ?? `session:${id}`;
    const place = reservePlace(clientKey);
    if (place === undefined) {
      return jsonRpcError(503, -32000, "too many sessions are being opened at once; try again in 1 s", {
        "retry-after": "1",
      });
    }
    try {
      await Promise.all(place.closing);
      return await startSession(id, clientKey, request, body, authInfo, place.release);
    } finally {
      place.release();
    }
  }

  /**
   * Opens the session `id` with its initialize request. It joins the table once initialized, and
   * its reserved place is released then (`joined`), so it is never counted twice.
   */
  async function startSession(
    id: string,
    clientKey: string,
    request: Request,
    body: unknown,
    authInfo: AuthInfo | undefined,
    joined: () => void,
  ): Promise<Response> {
    const { server, state } = options.open(clientKey);
    const session: Session<S> = {
      id,
      clientKey,
      server,
      state,
      transport: new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => id,
        onsessioninitialized: () => {
          joined();
          sessions.set(id, session);
          const own = perKey.get(clientKey) ?? new Set<Session<S>>();
          perKey.set(clientKey, own);
          own.add(session);
        },
        ...(options.maxBodyBytes === undefined ? {} : { maxRequestBodySize: options.maxBodyBytes }),
        enableJsonResponse: options.jsonResponse === true,
      }),
      work: createSessionWork(),
      lastSeen: clock(),
    };
    session.transport.onclose = () => forget(session);
    await server.connect(session.transport);
    const response = await session.transport.handleRequest(request, {
      parsedBody: body,
      ...(authInfo === undefined ? {} : { authInfo }),
    });
    // A refused initialize (wrong Accept header, bad message) leaves no session behind.
    if (!sessions.has(id)) await closeSession(session);
    else log.debug({ event: "mcp.session.opened", sessions: sessions.size }, "MCP session opened");
    return response;
  }

  return {
    async handle(request, body, { authInfo, clientKey }) {
      const sessionId = request.headers.get("mcp-session-id");
      if (sessionId === null) {
        if (request.method === "POST" && isInitializeRequest(body)) {
          return untracked(await openSession(request, body, authInfo, clientKey));
        }
        return untracked(
          jsonRpcError(
            400,
            -32000,
            "Bad Request: send initialize first (2025-11-25), or a request with the 2026-07-28 _meta envelope and MCP-Protocol-Version header",
          ),
        );
      }
      const session = sessions.get(sessionId);
      if (session === undefined) {
        return untracked(
          jsonRpcError(
            404,
            -32001,
            "Session not found: it ended, or another server process holds it; send initialize again",
          ),
        );
      }
      sessions.delete(sessionId);
      sessions.set(sessionId, session);
      session.lastSeen = clock();
      if (request.method === "POST") return exchange(session, request, body, authInfo);
      if (request.method === "DELETE") {
        // Not the transport's own DELETE, which closes at once: the session's running requests
        // answer first (session-work.ts).
        await closeSession(session);
        return untracked(new Response(null, { status: 200 }));
      }
      return untracked(
        await session.transport.handleRequest(request, authInfo === undefined ? {} : { authInfo }),
      );
    },
    sessions: () => sessions.values(),
    sweep,
    async close() {
      clearInterval(sweepTimer);
      // Shutting down: every session closes now, answered or not.
      const all = [...sessions.values(), ...ending];
      for (const session of all) forget(session);
      await Promise.all(all.map(shut));
    },
    get size() {
      return sessions.size;
    },
  };
}
