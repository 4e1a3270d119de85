// The client half of @doorbell/mcp-events: subscribe to an MCP server's events and iterate them,
// by poll, push or webhook.

export type { Connect } from "./connection.js";
export { EventsClientError, type EventsClientErrorCode, isEventsClientError } from "./errors.js";
export {
  EventsClient,
  type EventsClientOptions,
  type SubscribeOptions,
  type WebhookConfig,
} from "./events-client.js";
export type { SubscriptionNotice } from "./notices.js";
export { createFileCursorStore } from "./store/file-store.js";
export { type CursorStore, createMemoryCursorStore, type SubscriptionRecord } from "./store/store.js";
export type { EventsSubscription } from "./subscription.js";
export { systemTimers, type Timers } from "./timers.js";
export { EventsWebhookReceiver, type WebhookReceiverOptions } from "./webhook/receiver.js";
