/**
 * The forwarder's MCP endpoint: Streamable HTTP in session mode with the SDK's web-standard
 * transport, guarded like the holder's (mcp/handler.ts): Host/Origin check, body limit, JSON-RPC
 * errors for malformed requests, bounded sessions closed when idle, per-client rate limits.
 * It differs only in the tools each session's server gets (tools.ts).
 */
import { randomBytes } from "node:crypto";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { invalidParams, jsonRpcError } from "../mcp/handler.js";
import { createOriginGuard } from "../mcp/origin-guard.js";
import { createRateLimiter, type RateLimit } from "../mcp/rate-limit.js";
import type { ForwarderContext } from "./context.js";
import type { PushSide } from "./subscriptions.js";
import { registerForwarderTools } from "./tools.js";

export interface ForwarderMcpOptions {
  allowedHosts?: readonly string[];
  allowedOrigins?: readonly string[];
  /** Tool calls per client address. Default 60 at once, 5 a second; `false`: none. */
  toolRateLimit?: RateLimit | false;
  /** Default 1,000. */
  maxSessions?: number;
  /** Default 30 minutes. */
  sessionIdleMs?: number;
  /** Default 256 KiB. */
  maxBodyBytes?: number;
}

export interface ForwarderMcp {
  (request: Request, info?: { clientAddress?: string }): Promise<Response>;
  close(): Promise<void>;
}

interface Session {
  server: McpServer;
  transport: WebStandardStreamableHTTPServerTransport;
  lastSeen: number;
}

const INSTRUCTIONS =
  "An Isto Intents forwarder (MCP binding 0.1, consent-link and push profiles): every call goes to the intent holder behind it. " +
  "Publish with intent_publish_intent, give the person the consentUrl, keep the intentCode (fc_…), read matches with intent_list_matches " +
  "and, if you have an HTTPS endpoint, subscribe to doorbells with intent_subscribe_events.";

export function createForwarderMcp(
  ctx: ForwarderContext,
  push: PushSide,
  options: ForwarderMcpOptions = {},
): ForwarderMcp {
  const guard = createOriginGuard({
    publicUrl: ctx.publicUrl,
    ...(options.allowedHosts === undefined ? {} : { allowedHosts: options.allowedHosts }),
    ...(options.allowedOrigins === undefined ? {} : { allowedOrigins: options.allowedOrigins }),
  });
  const limit = options.toolRateLimit ?? { capacity: 60, refillPerSecond: 5 };
  const limiter = limit === false ? undefined : createRateLimiter(limit);
  const maxSessions = Math.max(1, options.maxSessions ?? 1000);
  const idleMs = options.sessionIdleMs ?? 30 * 60_000;
  const maxBody = options.maxBodyBytes ?? 256 * 1024;
  const sessions = new Map<string, Session>();
  let closed = false;

  const closeSession = async (id: string) => {
    const session = sessions.get(id);
    sessions.delete(id);
    await session?.server.close().catch(() => {});
  };
  const sweep = async () => {
    const cutoff = Date.now() - idleMs;
    for (const [id, session] of [...sessions]) if (session.lastSeen <= cutoff) await closeSession(id);
  };
  const timer = setInterval(() => void sweep(), Math.min(idleMs, 60_000));
  timer.unref();

  async function readBody(request: Request): Promise<{ value: unknown } | Response> {
    const declared = Number(request.headers.get("content-length") ?? "0");
    if (declared > maxBody)
      return jsonRpcError(413, -32000, `the request body is larger than ${maxBody} bytes`);
    const bytes = new Uint8Array(await request.arrayBuffer());
    if (bytes.byteLength > maxBody)
      return jsonRpcError(413, -32000, `the request body is larger than ${maxBody} bytes`);
    try {
      return { value: JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes)) };
    } catch {
      return jsonRpcError(400, -32700, "Parse error: the body is not UTF-8 JSON");
    }
  }

  async function open(request: Request, body: unknown, clientAddress: string | undefined): Promise<Response> {
    await sweep();
    while (sessions.size >= maxSessions) {
      const oldest = sessions.keys().next();
      if (oldest.done) break;
      await closeSession(oldest.value);
    }
    const id = randomBytes(18).toString("base64url");
    const clientKey = clientAddress === undefined ? `session:${id}` : `addr:${clientAddress}`;
    const server = new McpServer(
      { name: "doorbell-forwarder", version: "0.1.0" },
      { instructions: INSTRUCTIONS },
    );
    registerForwarderTools(server, {
      ctx,
      push,
      ...(limiter === undefined ? {} : { limiter }),
      clientKey: () => clientKey,
    });
    const session: Session = {
      server,
      transport: new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => id,
        onsessioninitialized: () => void sessions.set(id, session),
        maxRequestBodySize: maxBody,
      }),
      lastSeen: Date.now(),
    };
    session.transport.onclose = () => {
      if (sessions.get(id) === session) sessions.delete(id);
    };
    await server.connect(session.transport);
    const response = await session.transport.handleRequest(request, { parsedBody: body });
    if (!sessions.has(id)) await server.close().catch(() => {});
    return response;
  }

  const handler = (async (request, info = {}) => {
    if (closed) return jsonRpcError(503, -32000, "the forwarder is shutting down", { "retry-after": "5" });
    const refused = guard(request);
    if (refused !== undefined) return jsonRpcError(403, -32000, refused);
    if (!["POST", "GET", "DELETE"].includes(request.method)) {
      return jsonRpcError(405, -32000, "Method not allowed: use POST, GET or DELETE", {
        allow: "GET, POST, DELETE",
      });
    }
    try {
      const sessionId = request.headers.get("mcp-session-id");
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
        session.lastSeen = Date.now();
        if (request.method !== "POST") return await session.transport.handleRequest(request);
        const body = await readBody(request);
        if (body instanceof Response) return body;
        const problem = Array.isArray(body.value) ? undefined : invalidParams(body.value);
        if (problem !== undefined) {
          const requestId = (body.value as { id: unknown }).id;
          return Response.json({ jsonrpc: "2.0", id: requestId, error: { code: -32602, message: problem } });
        }
        return await session.transport.handleRequest(request, { parsedBody: body.value });
      }
      if (request.method !== "POST") {
        return jsonRpcError(400, -32000, "Bad Request: no Mcp-Session-Id header; send initialize first");
      }
      const body = await readBody(request);
      if (body instanceof Response) return body;
      if (!isInitializeRequest(body.value)) {
        return jsonRpcError(400, -32000, "Bad Request: no Mcp-Session-Id header; send initialize first");
      }
      return await open(request, body.value, info.clientAddress);
    } catch (error) {
      ctx.log.error(
        { event: "forwarder.mcp_failed", error: error instanceof Error ? error.name : typeof error },
        error instanceof Error ? error.message.slice(0, 300) : "an MCP request failed",
      );
      return jsonRpcError(500, -32603, "Internal error");
    }
  }) as ForwarderMcp;
  handler.close = async () => {
    closed = true;
    clearInterval(timer);
    await Promise.all([...sessions.keys()].map(closeSession));
  };
  return handler;
}
