/**
 * The one event model underneath every dialect. Dialects (./dialects) map their wire shapes onto
 * these types; the server and client SDKs only ever see these.
 */

export type JsonObject = Record<string, unknown>;
/** A JSON-RPC request id: the `requestId` that routes stream notifications. */
export type RequestId = string | number;

export type DeliveryMode = "poll" | "push" | "webhook";
export const DELIVERY_MODES: readonly DeliveryMode[] = ["poll", "push", "webhook"];

/** One occurrence of an event: an entry of a poll result, a push notification, a webhook body. */
export interface EventOccurrence {
  /** Stable id for de-duplication; the upstream's own id when it has one. */
  eventId: string;
  name: string;
  /** ISO 8601. */
  timestamp: string;
  data: JsonObject;
  /** Position after this event (push and webhook; poll carries it on the result). */
  cursor?: string;
}

/** An entry of `events/list`. */
export interface EventDescriptor {
  name: string;
  title?: string;
  description?: string;
  /** Always contains "poll" (the sketch: poll is mandatory). */
  delivery: DeliveryMode[];
  inputSchema: JsonObject;
  payloadSchema?: JsonObject;
}

export interface ListQuery {
  cursor?: string;
}
export interface ListOutcome {
  events: EventDescriptor[];
  nextCursor?: string;
}

/**
 * What a subscription listens for. `params` is the sketch's name; SEP-3415 calls it `arguments`.
 * `routeId` is the sketch's client-chosen `id` on poll and stream, echoed back, opaque.
 */
export interface SubscriptionSpec {
  name: string;
  params: JsonObject;
  /** `null` = start from now. Absent on the wire means the same. */
  cursor: string | null;
}

export interface PollQuery extends SubscriptionSpec {
  routeId?: string;
  maxEvents?: number;
  maxAgeMs?: number;
}
export interface PollOutcome {
  routeId?: string;
  events: EventOccurrence[];
  cursor: string | null;
  hasMore: boolean;
  /** Milliseconds; the sketch's wire carries whole seconds. */
  nextPollMs: number;
  /** SEP-3415: the cursor could not be honoured and delivery restarted at `cursor`. */
  truncated: boolean;
}

export interface StreamQuery extends SubscriptionSpec {
  routeId?: string;
  maxAgeMs?: number;
}
/** `notifications/events/active`. */
export interface StreamActive {
  requestId: RequestId;
  routeId?: string;
  cursor: string | null;
  truncated: boolean;
}
/** `notifications/events/event`. */
export interface StreamEvent {
  requestId: RequestId;
  routeId?: string;
  event: EventOccurrence;
}
/** `notifications/events/error` (transient) and `notifications/events/terminated` (final). */
export interface StreamProblem {
  requestId: RequestId;
  routeId?: string;
  error: ErrorObject;
}
/** `notifications/events/heartbeat`. */
export interface StreamHeartbeat {
  requestId: RequestId;
  cursor?: string | null;
}
/** The final `StreamEventsResult`. */
export interface StreamEnd {
  /** SEP-3415 echoes it in `_meta`; the sketch's result is empty (the JSON-RPC id routes it). */
  requestId?: RequestId;
}

export interface SubscribeQuery extends SubscriptionSpec {
  /** The sketch's client-chosen subscription id (≥ 122 bits). SEP-3415 derives it on the server. */
  id?: string;
  url: string;
  /** Client-supplied `whsec_` secret: an override in the sketch, required in SEP-3415. */
  secret?: string;
  /** SEP-3415: client-suggested TTL; `null` asks for no expiry. */
  ttlMs?: number | null;
  maxAgeMs?: number;
}
export interface SubscribeOutcome {
  id: string;
  /** Present only when the server created the subscription with a secret of its own. */
  secret?: string;
  refreshBefore: string | null;
  /** SEP-3415 only: the safe watermark. */
  cursor?: string | null;
  truncated?: boolean;
  deliveryStatus?: DeliveryStatus;
}

export interface UnsubscribeQuery {
  /** The sketch's key part; SEP-3415 identifies by name + params + url instead. */
  id?: string;
  url: string;
  name?: string;
  params?: JsonObject;
}

/** The fixed categories of `deliveryStatus.lastError`: never text from the endpoint. */
export type DeliveryErrorCategory =
  | "connection_refused"
  | "timeout"
  | "tls_error"
  | "http_4xx"
  | "http_5xx"
  | "challenge_failed";
export const DELIVERY_ERROR_CATEGORIES: readonly DeliveryErrorCategory[] = [
  "connection_refused",
  "timeout",
  "tls_error",
  "http_4xx",
  "http_5xx",
  "challenge_failed",
];

export interface DeliveryStatus {
  active: boolean;
  lastDeliveryAt: string | null;
  /** A category, or (for a signed error envelope) an events error name such as "Unauthorized". */
  lastError: string | null;
  failedSince?: string;
  /**
   * SEP-3415: the receiver is rate-limiting deliveries (it answered 429 or 503) and the next
   * attempt waits `retryAfterMs` (its Retry-After, when it sent one). Absent otherwise; the
   * sketch's deliveryStatus has neither field.
   */
  throttled?: boolean;
  retryAfterMs?: number;
}

export interface ErrorObject {
  code: number;
  message: string;
  data?: JsonObject;
}

/** What a webhook endpoint receives, whatever the dialect's body and headers. */
export type WebhookBody =
  | { type: "event"; subscriptionId: string; event: EventOccurrence }
  | { type: "error"; subscriptionId: string; error: ErrorObject }
  | { type: "verification"; subscriptionId: string; challenge: string }
  | { type: "gap"; subscriptionId: string; cursor: string | null };
