import type { IncomingMessage, ServerResponse } from "node:http";
import { EVENTS_METHODS, type RequestId } from "../protocol/index.js";
import type { EventsServer } from "./events-server.js";
import { ownedStreamsOf } from "./owned-streams.js";

// The legacy attach path serves a sessionful Streamable HTTP transport of `@modelcontextprotocol/sdk`
// 1.x. Only these shapes are read, so they are written here and the package does not depend on
// 1.x at run time (nor for its types); a 1.x transport, or one of v2's alike, fits them as it is.

/** The token facts a transport hands to its handlers (1.x `AuthInfo`, same shape in v2). */
export interface TransportAuthInfo {
  token: string;
  clientId: string;
  scopes: string[];
  expiresAt?: number;
  resource?: URL;
  extra?: Record<string, unknown>;
}

/** A web-standard Streamable HTTP server transport (1.x `WebStandardStreamableHTTPServerTransport`). */
export interface WebStandardTransportLike {
  readonly sessionId?: string | undefined;
  handleRequest(
    request: Request,
    options?: { authInfo?: TransportAuthInfo; parsedBody?: unknown },
  ): Promise<Response>;
}

/** A Node Streamable HTTP server transport (1.x `StreamableHTTPServerTransport`). */
export interface NodeTransportLike {
  readonly sessionId?: string | undefined;
  handleRequest(
    req: IncomingMessage & { auth?: TransportAuthInfo },
    res: ServerResponse,
    parsedBody?: unknown,
  ): Promise<void>;
}

/**
 * Hands one HTTP request to a Streamable HTTP transport and, for every `events/stream` request it
 * carries, stops that stream when the request's connection closes. The SDK's transport drops a
 * cancelled SSE response without telling the handler, so without this a stream whose client left
 * would live until the next server-side termination.
 */
export async function handleEventsHttpRequest(
  events: EventsServer,
  transport: WebStandardTransportLike,
  request: Request,
  options: { authInfo?: TransportAuthInfo } = {},
): Promise<Response> {
  let parsedBody: unknown;
  const streams: RequestId[] = [];
  if (request.method === "POST" && (request.headers.get("content-type") ?? "").includes("application/json")) {
    try {
      parsedBody = await request.json();
    } catch {
      parsedBody = undefined;
    }
    streams.push(...streamRequests(parsedBody));
    if (parsedBody === undefined) {
      return transport.handleRequest(
        new Request(request.url, { method: "POST", headers: request.headers, body: "{" }),
        options,
      );
    }
  }
  if (streams.length > 0) {
    request.signal.addEventListener(
      "abort",
      () => {
        for (const id of streams) events.streamDisconnected(transport.sessionId, id);
      },
      { once: true },
    );
  }
  const handle = () =>
    transport.handleRequest(request, {
      ...(options.authInfo ? { authInfo: options.authInfo } : {}),
      ...(parsedBody === undefined ? {} : { parsedBody }),
    });
  // One events/stream request on this session: its notifications go straight into the response.
  // Not with an event store: the SDK numbers its frames for Last-Event-ID replay, these would not be.
  const owned = ownedStreamsOf.get(events);
  const resumable = (transport as unknown as { _eventStore?: unknown })._eventStore !== undefined;
  const sessionId = transport.sessionId;
  const [streamId] = streams;
  if (
    owned === undefined ||
    resumable ||
    sessionId === undefined ||
    streamId === undefined ||
    Array.isArray(parsedBody) ||
    request.headers.get("mcp-session-id") !== sessionId
  )
    return handle();
  const sink = owned.open(sessionId, streamId);
  try {
    return owned.attach(sessionId, streamId, sink, await handle(), () =>
      events.streamDisconnected(sessionId, streamId),
    );
  } catch (error) {
    owned.drop(sessionId, streamId, sink);
    throw error;
  }
}

/** The ids of the `events/stream` requests a JSON-RPC body (one message or a batch) carries. */
function streamRequests(body: unknown): RequestId[] {
  const ids: RequestId[] = [];
  for (const message of Array.isArray(body) ? body : [body]) {
    const m = message as { method?: unknown; id?: unknown } | null;
    if (m?.method === EVENTS_METHODS.stream && (typeof m.id === "string" || typeof m.id === "number"))
      ids.push(m.id);
  }
  return ids;
}

/**
 * The same for the Node transport (`StreamableHTTPServerTransport` of SDK 1.x): a stream whose
 * response closed before it finished is stopped. Pass the body when a framework already parsed
 * it; otherwise it is read here (a body that is not JSON goes to the transport as it is).
 */
export async function handleEventsNodeRequest(
  events: EventsServer,
  transport: NodeTransportLike,
  req: IncomingMessage & { auth?: TransportAuthInfo },
  res: ServerResponse,
  parsedBody?: unknown,
): Promise<void> {
  let body = parsedBody;
  if (body === undefined && req.method === "POST") {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
  }
  const streams = streamRequests(body);
  if (streams.length > 0) {
    res.once("close", () => {
      if (res.writableFinished) return;
      for (const id of streams) events.streamDisconnected(transport.sessionId, id);
    });
  }
  await transport.handleRequest(req, res, body);
}
