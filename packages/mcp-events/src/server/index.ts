export type { AttachOptions, AttachTarget } from "./attach.js";
export type { CallContext, EventsAuthInfo } from "./context.js";
export type { Limits } from "./core.js";
export type { EmitBufferOptions } from "./emit-buffer.js";
export {
  createEventsServer,
  type EmitOptions,
  type EventsServer,
  type EventsServerOptions,
  type WakeOptions,
} from "./events-server.js";
export { handleEventsHttpRequest, handleEventsNodeRequest } from "./http.js";
export {
  type EventsListenHandler,
  type ListenBody,
  listenBody,
  type McpFetchHandler,
  withEventsListen,
} from "./listen.js";
export type {
  CheckFunction,
  CheckOptions,
  CheckResult,
  EventDefinition,
  EventInput,
  SubscriptionContext,
} from "./types.js";
export type { WebhookOptions } from "./webhook.js";
export { type EventsTables, eventsMigrations, type WebhookSubscriptionRow } from "./webhook-store.js";
