export { type EventsCapability, eventsCapabilities, readEventsCapability } from "./capability.js";
export { compact, type FieldIssue, invalidParams, parseOrInvalid } from "./common.js";
export { DIALECTS, detectRequestDialect, detectResultDialect, dialect } from "./detect.js";
export {
  type Codec,
  type DialectName,
  ERROR_CODE_PROFILES,
  type ErrorCodeProfile,
  type EventsDialect,
  type SignatureScheme,
} from "./dialect.js";
export { SEP_ERROR_CODES, sep3415, sep3415Dialect, sepSchemas, WHSEC } from "./dialects/sep-3415.js";
export { sketch, sketchSchemas } from "./dialects/sketch.js";
export {
  EVENTS_ERROR_CODES,
  EventsError,
  type EventsErrorName,
  eventsErrorName,
  isEventsError,
  toMcpError,
  WireError,
} from "./errors.js";
export { EVENTS_EXTENSION, EVENTS_METHODS, EVENTS_NOTIFICATIONS, SUBSCRIPTION_ID_META } from "./methods.js";
export {
  DELIVERY_ERROR_CATEGORIES,
  DELIVERY_MODES,
  type DeliveryErrorCategory,
  type DeliveryMode,
  type DeliveryStatus,
  type ErrorObject,
  type EventDescriptor,
  type EventOccurrence,
  type JsonObject,
  type ListOutcome,
  type ListQuery,
  type PollOutcome,
  type PollQuery,
  type RequestId,
  type StreamActive,
  type StreamEnd,
  type StreamEvent,
  type StreamHeartbeat,
  type StreamProblem,
  type StreamQuery,
  type SubscribeOutcome,
  type SubscribeQuery,
  type SubscriptionSpec,
  type UnsubscribeQuery,
  type WebhookBody,
} from "./model.js";
