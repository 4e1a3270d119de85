import type { ErrorObject, JsonObject } from "./model.js";

/**
 * The sketch's error codes (-32011..-32017) plus JSON-RPC's invalid params. The names are the
 * `message` on the wire. Dialects map them (SEP-3415 folds them into five general codes).
 */
export const EVENTS_ERROR_CODES = {
  InvalidParams: -32602,
  EventNotFound: -32011,
  Unauthorized: -32012,
  TooManySubscriptions: -32013,
  CursorExpired: -32014,
  InvalidCallbackUrl: -32015,
  SubscriptionNotFound: -32016,
  DeliveryModeUnsupported: -32017,
} as const;

export type EventsErrorName = keyof typeof EVENTS_ERROR_CODES;

const NAMES = new Map<number, EventsErrorName>(
  Object.entries(EVENTS_ERROR_CODES).map(([name, code]) => [code, name as EventsErrorName]),
);

/** The sketch name of a sketch code, or undefined for any other code. */
export function eventsErrorName(code: number): EventsErrorName | undefined {
  return NAMES.get(code);
}

/**
 * One events error in the model: a name from the table and optional data. It is not yet a wire
 * error — `toWire` of a dialect turns it into `{code, message, data}`. Thrown by check functions
 * and authorizers (e.g. `new EventsError("CursorExpired", { reason: "compacted" })`).
 */
export class EventsError extends Error {
  override readonly name = "EventsError";
  constructor(
    readonly kind: EventsErrorName,
    readonly data?: JsonObject,
    message?: string,
  ) {
    super(message ?? kind);
  }
}

export function isEventsError(value: unknown): value is EventsError {
  return value instanceof EventsError;
}

/**
 * A JSON-RPC error ready to throw from a request handler. Both SDK generations answer a thrown
 * error with its numeric `code`, its `message` and its `data`, so no SDK class is needed (and
 * the message stays the bare name, without an SDK's "MCP error <code>: " prefix).
 */
export class WireError extends Error {
  override readonly name = "WireError";
  readonly code: number;
  readonly data?: JsonObject;
  constructor(error: ErrorObject) {
    super(error.message);
    this.code = error.code;
    if (error.data !== undefined) this.data = error.data;
  }
}

/** The JSON-RPC error an SDK sends when a handler throws it. */
export function toMcpError(error: ErrorObject): WireError {
  return new WireError(error);
}
