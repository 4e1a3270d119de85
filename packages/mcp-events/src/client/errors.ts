import { CodedError } from "@doorbell/errors";
/**
 * Stable codes, one per way the MCP Events client refuses or fails. Messages are plain words and
 * never carry a secret, a subscription id (a bearer capability on unauthenticated servers) or a
 * cursor. When the server refused, its own words are kept: verbatim in `serverMessage` and
 * `serverData`, and, quoted, escaped and shortened, at the end of `message`.
 */
export type EventsClientErrorCode =
  /** A value given to this SDK is malformed (an event name, a URL, an option). */
  | "ERR_EVENTS_INVALID_ARGUMENT"
  /** The server does not speak MCP Events (`events/*` answered "method not found"). */
  | "ERR_EVENTS_NOT_SUPPORTED"
  /** The requested delivery mode cannot be used: the server does not list it or this client cannot do it. */
  | "ERR_EVENTS_DELIVERY_MODE_UNAVAILABLE"
  /** -32011 EventNotFound (sep-3415: -32011 NotFound). */
  | "ERR_EVENTS_EVENT_NOT_FOUND"
  /** -32012 Unauthorized (sep-3415: -32012 Forbidden). */
  | "ERR_EVENTS_UNAUTHORIZED"
  /** -32013 TooManySubscriptions (sep-3415: -32013 ResourceExhausted). */
  | "ERR_EVENTS_TOO_MANY_SUBSCRIPTIONS"
  /** -32014 CursorExpired; the client recovers from it itself and reports a gap. */
  | "ERR_EVENTS_CURSOR_EXPIRED"
  /** -32015 InvalidCallbackUrl (sep-3415: -32015 CallbackEndpointError). */
  | "ERR_EVENTS_INVALID_CALLBACK_URL"
  /** -32016 SubscriptionNotFound. */
  | "ERR_EVENTS_SUBSCRIPTION_NOT_FOUND"
  /** -32017 DeliveryModeUnsupported (sep-3415: -32014 Unsupported). */
  | "ERR_EVENTS_DELIVERY_MODE_UNSUPPORTED"
  /** -32602: the arguments do not match the event type's inputSchema. */
  | "ERR_EVENTS_INVALID_PARAMS"
  /** The server ended the subscription (revoked authorization, event type removed…); `serverCode` says why. */
  | "ERR_EVENTS_TERMINATED"
  /** Any other JSON-RPC error from the server; its code is kept in `serverCode`. */
  | "ERR_EVENTS_SERVER_ERROR"
  /** The server answered, but not in the shape the dialect defines. */
  | "ERR_EVENTS_PROTOCOL"
  /** The server could not be reached, or the connection closed. */
  | "ERR_EVENTS_UNREACHABLE"
  /** The cursor store cannot be read or written. */
  | "ERR_EVENTS_STATE"
  /** The subscription or the client was closed. */
  | "ERR_EVENTS_CLOSED";

export interface EventsClientErrorDetails {
  /** The JSON-RPC error code the server sent, when there was one. */
  serverCode?: number;
  /** The JSON-RPC error `message` the server sent, verbatim (untrusted: never shown to a model unfiltered). */
  serverMessage?: string;
  /** The JSON-RPC error `data` the server sent (untrusted: never shown to a model unfiltered). */
  serverData?: unknown;
}

export class EventsClientError extends CodedError<EventsClientErrorCode> {
  override readonly name = "EventsClientError";
  readonly serverCode: number | undefined;
  readonly serverMessage: string | undefined;
  readonly serverData: unknown;

  constructor(
    code: EventsClientErrorCode,
    message: string,
    details: EventsClientErrorDetails = {},
    cause?: unknown,
  ) {
    super(code, message, cause === undefined ? undefined : { cause });
    this.serverCode = details.serverCode;
    this.serverMessage = details.serverMessage;
    this.serverData = details.serverData;
  }
}

export const isEventsClientError = (value: unknown): value is EventsClientError =>
  value instanceof EventsClientError;
