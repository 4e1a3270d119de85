import type { EventsErrorName } from "./errors.js";
import type {
  ErrorObject,
  JsonObject,
  ListOutcome,
  ListQuery,
  PollOutcome,
  PollQuery,
  StreamActive,
  StreamEnd,
  StreamEvent,
  StreamHeartbeat,
  StreamProblem,
  StreamQuery,
  SubscribeOutcome,
  SubscribeQuery,
  UnsubscribeQuery,
  WebhookBody,
} from "./model.js";

export type DialectName = "sketch" | "sep-3415";

/**
 * The numbers SEP-3415's five general errors carry: `deployed` (-32011..-32015, what ChatGPT, the
 * AI SDK and the conformance scenarios use) or `sep-3415` (the draft SEP's -32023..-32027). The
 * sketch keeps its own codes under either.
 */
export type ErrorCodeProfile = "deployed" | "sep-3415";
export const ERROR_CODE_PROFILES: readonly ErrorCodeProfile[] = ["deployed", "sep-3415"];

/**
 * Both directions of one wire message: `decode` validates wire JSON into the model (throwing
 * `EventsError("InvalidParams")` with a precise reason) and `encode` writes the model as wire JSON.
 * Notification codecs encode the notification's `params`; result codecs the JSON-RPC `result`.
 */
export interface Codec<M> {
  decode(wire: unknown): M;
  encode(model: M): JsonObject;
}

/** How webhook deliveries are signed: the sketch's X-MCP-* or Standard Webhooks. */
export type SignatureScheme = "mcp" | "standard";

/** A wire mapping onto the one model (./model.ts). */
export interface EventsDialect {
  readonly name: DialectName;
  readonly signature: SignatureScheme;
  /** The sketch reports an expired cursor as `CursorExpired`; SEP-3415 restarts with `truncated`. */
  readonly cursorExpiry: "error" | "truncate";
  /** The wire error for an events error name. */
  error(kind: EventsErrorName, data?: JsonObject, message?: string): ErrorObject;
  /** The events error name of a wire error, if it is one of this dialect's. */
  errorName(error: Pick<ErrorObject, "code" | "data">): EventsErrorName | undefined;
  readonly list: { params: Codec<ListQuery>; result: Codec<ListOutcome> };
  readonly poll: { params: Codec<PollQuery>; result: Codec<PollOutcome> };
  readonly stream: {
    params: Codec<StreamQuery>;
    active: Codec<StreamActive>;
    event: Codec<StreamEvent>;
    error: Codec<StreamProblem>;
    terminated: Codec<StreamProblem>;
    heartbeat: Codec<StreamHeartbeat>;
    result: Codec<StreamEnd>;
  };
  readonly subscribe: { params: Codec<SubscribeQuery>; result: Codec<SubscribeOutcome> };
  readonly unsubscribe: { params: Codec<UnsubscribeQuery>; result: Codec<Record<string, never>> };
  /**
   * Webhook bodies. SEP-3415 carries the subscription id only in the `X-MCP-Subscription-Id`
   * header, so `decode` takes it from there when the body has none.
   */
  readonly webhook: {
    encode(body: WebhookBody): JsonObject;
    decode(json: unknown, headerSubscriptionId?: string): WebhookBody;
  };
}
