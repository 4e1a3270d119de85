/**
 * The JSON-RPC id the SDK gives an outgoing request. SDK 1.x does not expose it, yet stream
 * notifications are routed by it (the sketch's `requestId`, SEP-3415's
 * `_meta["io.modelcontextprotocol/subscriptionId"]`). As reference/mcp-events.md §3 suggests, the
 * transport's `send` is observed: the Protocol spreads the request, so the `params` object we
 * pass is the very object that reaches `send`, and that identity names the request.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { RequestId } from "../protocol/model.js";

const observed = new WeakSet<Transport>();
const waiting = new WeakMap<object, (id: RequestId) => void>();

/** Calls `onId` with the JSON-RPC id when the request carrying exactly `params` is sent. */
export function onRequestId(client: Client, params: object, onId: (id: RequestId) => void): void {
  observe(client);
  waiting.set(params, onId);
}

function observe(client: Client): void {
  const transport = client.transport;
  if (transport === undefined || observed.has(transport)) return;
  observed.add(transport);
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    const candidate = message as { id?: unknown; method?: unknown; params?: unknown };
    if (typeof candidate.method === "string" && candidate.id !== undefined && isObject(candidate.params)) {
      const onId = waiting.get(candidate.params);
      if (onId) {
        waiting.delete(candidate.params);
        onId(candidate.id as RequestId);
      }
    }
    return send(message, options);
  };
}

function isObject(value: unknown): value is object {
  return typeof value === "object" && value !== null;
}
