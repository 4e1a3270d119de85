import { DeliveryError } from "./errors.js";
import { DEFAULT_RETRY_POLICY, EVENTS_RETRY_POLICY, type RetryPolicy } from "./retry.js";
import type { Channel } from "./schema.js";

/**
 * How one channel delivers and what its failures do. The two protocols differ here and nowhere
 * else: the push profile keeps a strict queue and ends a subscription it cannot reach; MCP Events
 * retries each event on its own and only suspends delivery after sustained failures.
 */
export interface ChannelPolicy {
  /**
   * "queue": strictly in order, a failing event holds back everything behind it (push profile §6
   * rule 5). "each": every due event is sent, each retried on its own, so arrival order is best
   * effort (MCP Events sketch, "Delivery model").
   */
  readonly order: "queue" | "each";
  readonly retry: RetryPolicy;
  /** Delays after the first and second failed challenge; the third failure ends the subscription. */
  readonly challengeDelaysMs: readonly number[];
  /** 410: "end" the subscription (push profile §6 rule 5) or "drop" that one event (MCP Events). */
  readonly onGone: "end" | "drop";
  /** 413: "retry" like any answer other than 2xx (push profile §6 rule 5) or "drop" the event (MCP Events). */
  readonly onTooLarge: "retry" | "drop";
  /** Retries exhausted: "end" the subscription (push profile §6 rule 5) or "give-up" the event only. */
  readonly onExhausted: "end" | "give-up";
  /**
   * The payload cursor is a safe-to-persist watermark (MCP Events sketch): an event sent while an
   * older one is still pending goes without it.
   */
  readonly watermark: boolean;
  /** When sustained failures suspend delivery until the next refresh; undefined: never. */
  readonly suspend: SuspensionRule | undefined;
}

/**
 * Delivery is suspended once attempts have failed, with no success in between, for at least
 * `afterMs` and at least `afterFailures` times: a sustained failure rate, not one bad event (MCP
 * Events sketch: "after repeated failures (server-defined threshold)").
 */
export interface SuspensionRule {
  readonly afterMs: number;
  readonly afterFailures: number;
}

/** The MCP Events channels' settings (`DeliveryEngineOptions.events`). */
export interface EventsDeliveryOptions {
  /** Default `EVENTS_RETRY_POLICY`: 1 s, 5 s, 30 s, 2 min, within 5 min. */
  retry?: RetryPolicy;
  /** Default [1000, 3000]. */
  challengeDelaysMs?: readonly number[];
  /** Failing for at least this long with no success in between suspends delivery; default 10 min. */
  suspendAfterMs?: number;
  /** …and at least this many consecutive failed attempts; default 10. */
  suspendAfterFailures?: number;
}

export type ChannelPolicies = Readonly<Record<Channel, ChannelPolicy>>;

export const PUSH_CHALLENGE_DELAYS_MS: readonly number[] = [5_000, 30_000];
export const EVENTS_CHALLENGE_DELAYS_MS: readonly number[] = [1_000, 3_000];
export const EVENTS_SUSPENSION: SuspensionRule = { afterMs: 10 * 60_000, afterFailures: 10 };

/** Every channel's policy, from the engine's options: `retry` and `challengeDelaysMs` are push's. */
export function channelPolicies(options: {
  retry?: RetryPolicy | undefined;
  challengeDelaysMs?: readonly number[] | undefined;
  events?: EventsDeliveryOptions | undefined;
}): ChannelPolicies {
  const push: ChannelPolicy = {
    order: "queue",
    retry: options.retry ?? DEFAULT_RETRY_POLICY,
    challengeDelaysMs: options.challengeDelaysMs ?? PUSH_CHALLENGE_DELAYS_MS,
    onGone: "end",
    onTooLarge: "retry",
    onExhausted: "end",
    watermark: false,
    suspend: undefined,
  };
  const events = options.events ?? {};
  const suspend: SuspensionRule = {
    afterMs: events.suspendAfterMs ?? EVENTS_SUSPENSION.afterMs,
    afterFailures: events.suspendAfterFailures ?? EVENTS_SUSPENSION.afterFailures,
  };
  if (!(Number.isFinite(suspend.afterMs) && suspend.afterMs >= 0)) {
    throw new DeliveryError("ERR_DELIVERY_CONFIG", "events.suspendAfterMs must be a non-negative number");
  }
  if (!(Number.isSafeInteger(suspend.afterFailures) && suspend.afterFailures >= 1)) {
    throw new DeliveryError("ERR_DELIVERY_CONFIG", "events.suspendAfterFailures must be a positive integer");
  }
  const mcp: ChannelPolicy = {
    order: "each",
    retry: events.retry ?? EVENTS_RETRY_POLICY,
    challengeDelaysMs: events.challengeDelaysMs ?? EVENTS_CHALLENGE_DELAYS_MS,
    // MCP Events: 410 and 413 are non-retryable for that delivery; 410 does not disable the endpoint.
    onGone: "drop",
    onTooLarge: "drop",
    onExhausted: "give-up",
    watermark: true,
    suspend,
  };
  // The operator's webhook (operator-events.ts): the Standard Webhooks schedule within 24 h,
  // each event on its own; a refused event is given up (dead-lettered), the webhook stays.
  const operator: ChannelPolicy = {
    order: "each",
    retry: DEFAULT_RETRY_POLICY,
    challengeDelaysMs: [],
    onGone: "drop",
    onTooLarge: "drop",
    onExhausted: "give-up",
    watermark: false,
    suspend: undefined,
  };
  // Both MCP wires follow the same rules; only the bodies and headers differ (channels.ts).
  return { push, mcp, "mcp-standard": mcp, operator };
}

/** The channels whose policy retries each event on its own. */
export function eachChannels(policies: ChannelPolicies): Channel[] {
  return (Object.keys(policies) as Channel[]).filter((channel) => policies[channel].order === "each");
}
