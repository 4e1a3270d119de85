import { EVENTS_NOTIFICATIONS, SUBSCRIPTION_ID_META } from "../protocol/index.js";

/** The fetch face of `createMcpHandler` (2.x), as far as this wrapper uses it. */
export interface McpFetchHandler {
  fetch(request: Request, options?: { authInfo?: unknown; parsedBody?: unknown }): Promise<Response>;
}

export interface EventsListenHandler {
  fetch(request: Request, options?: { authInfo?: unknown; parsedBody?: unknown }): Promise<Response>;
  /** Ends the listen streams this wrapper holds open (events-only ones) with their final result. */
  close(): void;
}

const KEEPALIVE_MS = 15_000;
const LISTEN = "subscriptions/listen";
const ACK = "notifications/subscriptions/acknowledged";

/** A `subscriptions/listen` request's JSON-RPC body, as far as the wrappers in front of the SDK read it. */
export interface ListenBody {
  id?: unknown;
  method?: unknown;
  params?: { notifications?: Record<string, unknown> };
}

/**
 * The body of a `subscriptions/listen` POST (the one the caller parsed, or read from a clone),
 * undefined for any other request: one header read for everything else. The SDK refuses a modern
 * request whose Mcp-Method header does not match its body, so the header decides.
 */
export async function listenBody(
  request: Request,
  options: { parsedBody?: unknown } = {},
): Promise<ListenBody | undefined> {
  if (request.method !== "POST" || request.headers.get("mcp-method") !== LISTEN) return undefined;
  return (options.parsedBody ??
    (await request
      .clone()
      .json()
      .catch(() => undefined))) as ListenBody | undefined;
}

/**
 * `eventsListChanged` on `subscriptions/listen` (SEP-3415). The 2.x SDK's listen router knows only
 * the four core change types: its bus carries no other kind and its acknowledgement drops unknown
 * filter fields. So this wrapper sits in front of the handler: a listen request asking for
 * `eventsListChanged` goes to the SDK without that field (which still validates the request and
 * serves the core types), and the SDK's stream comes back with the field echoed in the
 * acknowledgement and `notifications/events/list_changed` added. When the client asked for
 * nothing else, the SDK would end the stream at once; the wrapper keeps it open instead.
 * Every other request passes straight through (one header read).
 */
export function withEventsListen(
  handler: McpFetchHandler,
  events: { onListChanged(listener: () => void): () => void },
): EventsListenHandler {
  const held = new Set<() => void>();
  return {
    async fetch(request, options = {}) {
      const body = await listenBody(request, options);
      const wanted = body?.params?.notifications;
      if (typeof wanted !== "object" || wanted === null || wanted.eventsListChanged !== true)
        return handler.fetch(request, options);
      const { eventsListChanged: _, ...core } = wanted;
      const parsedBody = { ...body, params: { ...body?.params, notifications: core } };
      const response = await handler.fetch(request, { ...options, parsedBody });
      if (!(response.headers.get("content-type") ?? "").includes("text/event-stream") || !response.body)
        return response;
      const stream = relay(response.body, body?.id as string | number, events, held);
      return new Response(stream, { status: response.status, headers: response.headers });
    },
    close() {
      for (const end of [...held]) end();
    },
  };
}

/** The SDK's listen stream with `eventsListChanged` woven in. */
function relay(
  upstream: ReadableStream<Uint8Array>,
  id: string | number,
  events: { onListChanged(listener: () => void): () => void },
  held: Set<() => void>,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  const reader = upstream.getReader();
  let closed = false;
  let stopListening = () => {};
  let keepalive: NodeJS.Timeout | undefined;
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  // Set by the ack: the SDK serves nothing besides events on this stream.
  let eventsOnly = false;
  const meta = { [SUBSCRIPTION_ID_META]: id };
  const write = (text: string) => {
    if (!closed) controller.enqueue(encoder.encode(text));
  };
  const message = (value: unknown) => write(`event: message\ndata: ${JSON.stringify(value)}\n\n`);
  const finish = (final?: string) => {
    if (closed) return;
    if (final !== undefined) write(final);
    closed = true;
    stopListening();
    if (keepalive) clearInterval(keepalive);
    held.delete(end);
    controller.close();
  };
  // Server-side end of a stream the SDK no longer holds: the graceful `complete` result.
  const end = () =>
    finish(
      `event: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", id, result: { resultType: "complete", _meta: meta } })}\n\n`,
    );

  /** One SSE frame from the SDK: the ack gains the field; a final result is held back. */
  const frame = (text: string): string | undefined => {
    const data = text
      .split("\n")
      .filter((line) => line.startsWith("data:"))
      .map((line) => line.slice(5).trimStart())
      .join("\n");
    if (!data) return `${text}\n\n`;
    const parsed = JSON.parse(data) as {
      method?: string;
      result?: unknown;
      params?: { notifications?: Record<string, unknown> };
    };
    if (parsed.method === ACK && parsed.params?.notifications) {
      eventsOnly = Object.keys(parsed.params.notifications).length === 0;
      parsed.params.notifications.eventsListChanged = true;
      return `event: message\ndata: ${JSON.stringify(parsed)}\n\n`;
    }
    if (parsed.result !== undefined) return undefined;
    return `${text}\n\n`;
  };

  return new ReadableStream<Uint8Array>({
    start(streamController) {
      controller = streamController;
      stopListening = events.onListChanged(() =>
        message({ jsonrpc: "2.0", method: EVENTS_NOTIFICATIONS.listChanged, params: { _meta: meta } }),
      );
      held.add(end);
      void (async () => {
        let buffer = "";
        let finalResult: string | undefined;
        try {
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            buffer += decoder.decode(value, { stream: true });
            let cut = buffer.indexOf("\n\n");
            while (cut >= 0) {
              const text = buffer.slice(0, cut);
              buffer = buffer.slice(cut + 2);
              const out = frame(text);
              if (out === undefined) finalResult = `${text}\n\n`;
              else write(out);
              cut = buffer.indexOf("\n\n");
            }
          }
        } catch {
          // The client left (cancel) or the SDK's stream failed: nothing more to relay.
        }
        if (closed) return;
        // The SDK ended a stream it had core types on: the server is closing, so end ours too.
        // It ended one with nothing of its own (only eventsListChanged): ours stays open.
        if (!eventsOnly) return finish(finalResult);
        keepalive = setInterval(() => write(": keepalive\n\n"), KEEPALIVE_MS);
        keepalive.unref();
      })();
    },
    cancel() {
      closed = true;
      stopListening();
      if (keepalive) clearInterval(keepalive);
      held.delete(end);
      void reader.cancel().catch(() => undefined);
    },
  });
}
