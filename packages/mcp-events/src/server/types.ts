import type { z } from "zod";
import type { DeliveryMode, EventOccurrence, JsonObject } from "../protocol/index.js";
import type { EventsAuthInfo } from "./context.js";

/** What an author's function learns about the subscription it serves. */
export interface SubscriptionContext {
  /** The SDK's id of this subscription: the target of a targeted `emit`. */
  readonly subscriptionId: string;
  readonly mode: DeliveryMode;
  readonly name: string;
  /** The authenticated subject, when the transport has one. */
  readonly principal?: string;
  readonly authInfo?: EventsAuthInfo;
  readonly sessionId?: string;
}

/** One event as an author produces it; the SDK fills in what is missing. */
export interface EventInput {
  /** The upstream's stable id when there is one (so emit and poll collapse); generated otherwise. */
  eventId?: string;
  data: JsonObject;
  /** When it happened; now by default. */
  timestamp?: string | Date;
  /** Position after this event, when the upstream has per-event positions. */
  cursor?: string;
}

export interface CheckOptions {
  /** At most this many events are wanted. */
  maxEvents: number;
}

/** What a check function answers: the events since the cursor and the position after them. */
export interface CheckResult {
  events: EventInput[];
  cursor: string;
  /** More events wait beyond this batch. */
  hasMore?: boolean;
  /** Overrides the server's poll interval for this answer. */
  nextPollMs?: number;
}

/**
 * "Check for changes since cursor": one function serves poll, push and webhook. A `null`
 * cursor asks for the current position and no events. Throw `EventsError("CursorExpired")` when
 * the cursor can no longer be honoured.
 */
export type CheckFunction<P> = (
  ctx: SubscriptionContext,
  params: P,
  cursor: string | null,
  options: CheckOptions,
) => CheckResult | Promise<CheckResult>;

export interface EventDefinition<P extends JsonObject = JsonObject> {
  name: string;
  title?: string;
  description?: string;
  /** Validates subscription params (InvalidParams otherwise); `inputSchema` is derived from it. */
  params?: z.ZodType<P>;
  /** The published JSON Schema, when not derived from `params`. */
  inputSchema?: JsonObject;
  payloadSchema?: JsonObject;
  /** Absent: the type is emit-only and poll reads the server's emit buffer. */
  check?: CheckFunction<P>;
  /** Broadcast emit: does this subscription receive the event? All do by default. */
  match?(ctx: SubscriptionContext, event: EventOccurrence, params: P): boolean;
  /** Broadcast emit and buffer reads: shape the event for this subscription. */
  transform?(ctx: SubscriptionContext, event: EventOccurrence, params: P): EventOccurrence;
  /**
   * Subscribe-time and delivery-time authorization. Return false (or throw
   * `EventsError("Unauthorized", {reason})`) to refuse; a live subscription is then terminated.
   */
  authorize?(ctx: SubscriptionContext, params: P): boolean | Promise<boolean>;
  /**
   * What a change to this subscription's upstream is addressed to (e.g. the one record its params
   * name): `wake(name, { topic })` then runs the checks of just those subscriptions, in every
   * mode, webhook subscriptions made through other processes included.
   */
  topic?(ctx: SubscriptionContext, params: P): string | Promise<string>;
  /** Called once per subscription in every mode, after the subscription limit was checked. */
  onSubscribe?(ctx: SubscriptionContext, params: P, subscriptionId: string): void | Promise<void>;
  onUnsubscribe?(ctx: SubscriptionContext, params: P, subscriptionId: string): void | Promise<void>;
  /** Turn push or webhook off for this type; poll cannot be turned off. */
  delivery?: { push?: boolean; webhook?: boolean };
  /** The poll interval recommended for this type (default: the server's). */
  nextPollMs?: number;
}

/** A definition with its params type erased, as the server stores it. */
// biome-ignore lint/suspicious/noExplicitAny: the registry holds definitions of any params type.
export type AnyEventDefinition = EventDefinition<any>;
