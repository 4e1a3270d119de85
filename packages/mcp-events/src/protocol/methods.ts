/** The JSON-RPC method names of MCP Events; they are the same in every dialect. */
export const EVENTS_METHODS = {
  list: "events/list",
  poll: "events/poll",
  stream: "events/stream",
  subscribe: "events/subscribe",
  unsubscribe: "events/unsubscribe",
} as const;

/** The notifications of MCP Events: `listChanged` on the session, the rest on an `events/stream`. */
export const EVENTS_NOTIFICATIONS = {
  listChanged: "notifications/events/list_changed",
  active: "notifications/events/active",
  event: "notifications/events/event",
  error: "notifications/events/error",
  terminated: "notifications/events/terminated",
  heartbeat: "notifications/events/heartbeat",
} as const;

/** The extension identifier of SEP-3415, used for the capability and for `_meta` keys. */
export const EVENTS_EXTENSION = "io.modelcontextprotocol/events";
/** The `_meta` key that routes SEP-3415 stream notifications to their `events/stream` request. */
export const SUBSCRIPTION_ID_META = "io.modelcontextprotocol/subscriptionId";
