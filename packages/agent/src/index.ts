// @doorbell/agent: what an agent embeds — a holder client over MCP, a doorbell listener
// (push profile 0.4) and the pull fallback that loses nothing.

// The push profile's event names, exported here before they had a package of their own.
export { PUSH_EVENTS, type PushEvent } from "@doorbell/intents";
// The name this package exported before the guard moved to @doorbell/mcp-endpoint.
export { scopedSignalFetch as perRequestSignalFetch } from "@doorbell/mcp-endpoint/client";
export { type Clock, systemClock } from "./clock.js";
export { AgentError, type AgentErrorCode, type AgentErrorDetails, isAgentError } from "./errors.js";
export {
  HolderClient,
  type HolderClientOptions,
  type ListMatchesResult,
  type SubscribeInput,
} from "./holder/client.js";
export { MAX_NEXT_CHECK_AFTER_MS, MIN_PULL_INTERVAL_MS, type PaceState } from "./holder/pacer.js";
export type {
  Intent,
  Match,
  Offer,
  Published,
  PushSubscription,
  SubscriptionStatus,
} from "./holder/results.js";
export { DOORBELL_TYPES, type Doorbell, type DoorbellType, parseDoorbell } from "./listener/doorbell.js";
export {
  createDoorbellListener,
  type DoorbellListener,
  type DoorbellListenerOptions,
} from "./listener/listener.js";
export { StateBox } from "./state/box.js";
export { createPersistentDedup } from "./state/dedup.js";
export { createFileStateStore } from "./state/file-store.js";
export { type AgentState, emptyState, type LocalSubscription, type WatchState } from "./state/schema.js";
export { createMemoryStateStore, type StateStore } from "./state/store.js";
export { type AgentOptions, DEFAULT_TIMING, DoorbellAgent } from "./watch/agent.js";
export type { AgentHooks, AgentTiming } from "./watch/context.js";
export {
  type DoorbellRang,
  doorbellWords,
  type IntentHandle,
  nextReadWords,
  type ReadDone,
  type SubscriptionReport,
} from "./watch/report.js";
