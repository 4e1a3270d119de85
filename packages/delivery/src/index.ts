export {
  followsMcpRules,
  mcpEnvelope,
  mcpStandardEnvelope,
  pushEnvelope,
  signAttempt,
  standardWebhookId,
  verificationBody,
} from "./channels.js";
export {
  type CoalescedEvent,
  type CoalescedState,
  type CoalescingLimits,
  coalescingLimits,
  PROFILE_LIMITS,
} from "./coalesce.js";
export {
  type DeadLetter,
  type DeliveryLogEntry,
  type DeliveryLogFilter,
  type LoggedAttempt,
  listDeliveries,
  type QueuedDoorbell,
  type SubscriptionLog,
  showDelivery,
} from "./delivery-log.js";
export { type EnableResult, enableEndpoint } from "./enable.js";
export {
  createDeliveryEngine,
  type DeliveryEngine,
  type DeliveryEngineOptions,
  NOTIFY_CHANNEL,
} from "./engine.js";
export { DeliveryError, type DeliveryErrorCode } from "./errors.js";
export type { DeliveryEvent, EnqueueItem, EnqueueResult } from "./events.js";
export {
  DEFAULT_ENDPOINT_DISABLE_AFTER_MS,
  type EndpointHealth,
  type EndpointHealthOptions,
  type EndpointState,
  HEALTH_WINDOW_MS,
} from "./health.js";
export type { DeliveryMetrics } from "./metrics.js";
export {
  type ConfiguredOperatorWebhook,
  OPERATOR_EVENT_TYPES,
  OPERATOR_SUBSCRIPTION_ID,
  type OperatorEventType,
  type OperatorWebhook,
} from "./operator-events.js";
export type { ChannelPolicy, EventsDeliveryOptions, SuspensionRule } from "./policy.js";
export {
  clearDeliveries,
  endedReasons,
  liveSubscription,
  oldestPendingAgeMs,
  storedSubscription,
} from "./reads.js";
export { type OpenDeadLetter, openDeadLetters, type RecentAttempt, recentFailedAttempts } from "./recent.js";
export { type ReplayResult, replayDeadLetter } from "./replay.js";
export {
  DEFAULT_DEAD_LETTER_RETENTION_MS,
  DEFAULT_RETENTION_MS,
  type PruneOptions,
  type PruneResult,
  pruneDeliveries,
} from "./retention.js";
export {
  DEFAULT_RETRY_POLICY,
  EVENTS_RETRY_POLICY,
  nextAttemptAt,
  type RetryPolicy,
  STANDARD_WEBHOOKS_DELAYS_MS,
} from "./retry.js";
export { type Channel, type DeliveryTables, deliveryMigrations, type SubscriptionStatus } from "./schema.js";
export {
  readStats,
  STATS_BUCKET_MS,
  STATS_KEPT_MS,
  type StatsBin,
  type StatsRecorder,
} from "./stats.js";
export {
  type DeliveryStatus,
  type EndOptions,
  MAX_LEASE_MS,
  type RenewInput,
  type SubscribeInput,
  type SubscriptionView,
} from "./subscriptions.js";
export type { Worker, WorkerOptions } from "./worker.js";
