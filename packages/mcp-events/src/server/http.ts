import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import type { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { EVENTS_METHODS, type RequestId } from "../protocol/index.js";
import type { EventsServer } from "./events-server.js";

/**
 * Hands one HTTP request to a Streamable HTTP transport and, for every `events/stream` request it
 * carries, stops that stream when the request's connection closes. The SDK's transport drops a
 * cancelled SSE response without telling the handler, so without this a stream whose client left
 * would live until the next server-side termination.
 */
export async function handleEventsHttpRequest(
  events: EventsServer,
  transport: WebStandardStreamableHTTPServerTransport,
  request: Request,
  options: { authInfo?: AuthInfo } = {},
): Promise<Response> {
  let parsedBody: unknown;
  const streams: RequestId[] = [];
  if (request.method === "POST" && (request.headers.get("content-type") ?? "").includes("application/json")) {
    try {
      parsedBody = await request.json();
    } catch {
      parsedBody = undefined;
    }
    for (const message of Array.isArray(parsedBody) ? parsedBody : [parsedBody]) {
      const m = message as { method?: unknown; id?: unknown } | null;
      if (m?.method === EVENTS_METHODS.stream && (typeof m.id === "string" || typeof m.id === "number"))
        streams.push(m.id);
    }
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
  return transport.handleRequest(request, {
    ...(options.authInfo ? { authInfo: options.authInfo } : {}),
    ...(parsedBody === undefined ? {} : { parsedBody }),
  });
}
