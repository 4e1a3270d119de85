/**
 * The JSON-RPC id the SDK gives an outgoing request. Stream notifications are routed by it (the
 * sketch's `requestId`, SEP-3415's `_meta["io.modelcontextprotocol/subscriptionId"]`), yet the v2
 * Client (2.4.0) does not expose it: `request()` returns only the result, `onprogress` sees the id
 * (its progressToken) only if the server sends progress, and `listen()` is for
 * `subscriptions/listen` alone. So the transport's `send` is observed, and the request is
 * recognised by a one-time token under a `_meta` key of ours: the v2 Client copies `params` and
 * `_meta` on the way out (the 2026-07-28 envelope, a progress token), so object identity cannot
 * name the request, but the token's value survives every copy.
 *
 * The same place tells when the request's own response stream ends (Streamable HTTP's
 * `onRequestStreamEnd` send option, which the v2 Protocol does not pass on from `request()`): on
 * a 2026-07-28 server a dropped stream otherwise leaves the request pending, noticed only by the
 * heartbeat watchdog.
 */
import type { Client, Transport } from "@modelcontextprotocol/client";
import type { RequestId } from "../protocol/model.js";

/** Names one outgoing request for {@link onRequestId}; servers ignore `_meta` keys they do not know. */
export const ROUTE_META = "dev.doorbell.events/route";

const observed = new WeakSet<Transport>();
interface Watcher {
  onId(id: RequestId): void;
  onStreamEnd?: () => void;
}

const waiting = new Map<string, Watcher>();

/**
 * Calls `onId` with the JSON-RPC id of the request whose `params._meta` carries `token` under
 * {@link ROUTE_META}, when the client sends it, and `onStreamEnd` when the transport reports that
 * request's response stream ended for any reason but our own abort (HTTP only). Returns a
 * function that stops waiting (for a request that never went out).
 */
export function onRequestId(
  client: Client,
  token: string,
  onId: (id: RequestId) => void,
  onStreamEnd?: () => void,
): () => void {
  observe(client);
  const watcher: Watcher = onStreamEnd === undefined ? { onId } : { onId, onStreamEnd };
  waiting.set(token, watcher);
  return () => {
    if (waiting.get(token) === watcher) waiting.delete(token);
  };
}

function observe(client: Client): void {
  const transport = client.transport;
  if (transport === undefined || observed.has(transport)) return;
  observed.add(transport);
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    const candidate = message as { id?: unknown; method?: unknown; params?: { _meta?: unknown } };
    const meta = candidate.params?._meta as Record<string, unknown> | undefined;
    const token = meta?.[ROUTE_META];
    const watcher = typeof token === "string" ? waiting.get(token) : undefined;
    if (watcher && typeof candidate.method === "string" && isRequestId(candidate.id)) {
      waiting.delete(token as string);
      watcher.onId(candidate.id);
      const onStreamEnd = watcher.onStreamEnd;
      if (onStreamEnd) {
        const theirs = options?.onRequestStreamEnd;
        return send(message, {
          ...options,
          onRequestStreamEnd: () => {
            theirs?.();
            onStreamEnd();
          },
        });
      }
    }
    return send(message, options);
  };
}

function isRequestId(value: unknown): value is RequestId {
  return typeof value === "string" || typeof value === "number";
}
