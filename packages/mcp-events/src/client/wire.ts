/**
 * One `events/*` request through the SDK Client, in one place: the dialect encodes the query and
 * decodes the answer, and every failure becomes an EventsClientError with a stable code.
 */
import {
  type Client,
  ProtocolError,
  ProtocolErrorCode,
  type RequestOptions,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
} from "@modelcontextprotocol/client";
import { z } from "zod";
import { DIALECTS } from "../protocol/detect.js";
import type { EventsDialect } from "../protocol/dialect.js";
import { type EventsErrorName, isEventsError } from "../protocol/errors.js";
import type { JsonObject } from "../protocol/model.js";
import { EventsClientError, type EventsClientErrorCode } from "./errors.js";
import { serverWords } from "./server-words.js";

/** The SDK checks only that a result is an object; the dialect's codec does the real check. */
export const looseResult = z.looseObject({});

export async function call<M>(
  client: Client,
  dialect: EventsDialect,
  method: string,
  params: JsonObject,
  decode: (wire: unknown) => M,
  options?: RequestOptions,
): Promise<M> {
  let wire: unknown;
  try {
    wire = await client.request({ method, params }, looseResult, options);
  } catch (error) {
    throw fromRequestError(dialect, method, error);
  }
  return decodeOrProtocolError(method, wire, decode);
}

export function decodeOrProtocolError<M>(what: string, wire: unknown, decode: (wire: unknown) => M): M {
  try {
    return decode(wire);
  } catch (error) {
    const detail = isEventsError(error) ? error.message : "it could not be read";
    throw new EventsClientError("ERR_EVENTS_PROTOCOL", `the server's ${what} is not valid: ${detail}`);
  }
}

const BY_NAME: Record<EventsErrorName, EventsClientErrorCode> = {
  InvalidParams: "ERR_EVENTS_INVALID_PARAMS",
  EventNotFound: "ERR_EVENTS_EVENT_NOT_FOUND",
  Unauthorized: "ERR_EVENTS_UNAUTHORIZED",
  TooManySubscriptions: "ERR_EVENTS_TOO_MANY_SUBSCRIPTIONS",
  CursorExpired: "ERR_EVENTS_CURSOR_EXPIRED",
  InvalidCallbackUrl: "ERR_EVENTS_INVALID_CALLBACK_URL",
  SubscriptionNotFound: "ERR_EVENTS_SUBSCRIPTION_NOT_FOUND",
  DeliveryModeUnsupported: "ERR_EVENTS_DELIVERY_MODE_UNSUPPORTED",
};

/** A JSON-RPC error object (from a response, a stream notification or a webhook envelope) as a typed error. */
export function fromErrorObject(
  dialect: EventsDialect | undefined,
  error: { code: number; message: string; data?: unknown },
  context: string,
): EventsClientError {
  // Only an object `data` can say which error it is; any other is still kept for the app.
  const typed = {
    code: error.code,
    ...(typeof error.data === "object" && error.data !== null && !Array.isArray(error.data)
      ? { data: error.data as JsonObject }
      : {}),
  };
  // The dialect spoken reads the code first. A server of the other dialect: its code still says
  // what happened (a revoked subscription is final either way), instead of becoming an unknown
  // error retried forever.
  const name = [dialect, ...Object.values(DIALECTS).filter((other) => other !== dialect)]
    .map((reader) => reader?.errorName(typed))
    .find((found) => found !== undefined);
  const code = name ? BY_NAME[name] : "ERR_EVENTS_SERVER_ERROR";
  const label = name ?? `error ${error.code}`;
  // The server's reason is what the app needs to act on a refusal; it is untrusted, so it is
  // kept verbatim in its own fields and only quoted and escaped in the message.
  return new EventsClientError(
    code,
    `${context}: the server answered ${label}${serverWords(error.message, error.data)}`,
    { serverCode: error.code, serverMessage: error.message, serverData: error.data },
  );
}

/** `dialect`: the one the request was written in, if it got that far. */
export function fromRequestError(
  dialect: EventsDialect | undefined,
  method: string,
  error: unknown,
): EventsClientError {
  if (error instanceof EventsClientError) return error;
  // The server's JSON-RPC error (a 2026-07-28 HTTP 400 carrying one included: the transport hands it over).
  const answered = error instanceof ProtocolError ? error : errorInHttpBody(error);
  if (answered) {
    if (answered.code === ProtocolErrorCode.MethodNotFound) {
      return new EventsClientError("ERR_EVENTS_NOT_SUPPORTED", `the server does not offer ${method}`, {
        serverCode: answered.code,
        serverMessage: answered.message,
        ...(answered.data === undefined ? {} : { serverData: answered.data }),
      });
    }
    return fromErrorObject(dialect, answered, method);
  }
  // The SDK's own failures: no server code, only a string code for what went wrong locally.
  if (error instanceof SdkError) {
    switch (error.code) {
      case SdkErrorCode.InvalidResult:
      case SdkErrorCode.UnsupportedResultType:
        return new EventsClientError(
          "ERR_EVENTS_PROTOCOL",
          `the server's ${method} answer is not valid`,
          {},
          error,
        );
      case SdkErrorCode.CapabilityNotSupported:
      case SdkErrorCode.MethodNotSupportedByProtocolVersion:
        return new EventsClientError(
          "ERR_EVENTS_NOT_SUPPORTED",
          `the server does not offer ${method}`,
          {},
          error,
        );
      default:
        // Timeouts, a closed connection, a failed send, an HTTP status without a JSON-RPC error.
        return new EventsClientError(
          "ERR_EVENTS_UNREACHABLE",
          `${method}: the connection closed, failed or timed out (${error.code})`,
          {},
          error,
        );
    }
  }
  if (error instanceof Error && error.name === "AbortError") {
    return new EventsClientError("ERR_EVENTS_CLOSED", `${method} was cancelled`, {}, error);
  }
  return new EventsClientError(
    "ERR_EVENTS_UNREACHABLE",
    `${method}: the server could not be reached (${error instanceof Error ? error.message.slice(0, 200) : "unknown failure"})`,
    {},
    error,
  );
}

/**
 * A 2026-07-28 server answers some JSON-RPC errors with an HTTP status other than 400 (SDK v2's
 * `createMcpHandler` sends MethodNotFound as 404); the v2 transport then raises an SdkHttpError
 * holding the body. When that body is a JSON-RPC error, it is the server's answer, not a
 * transport failure: retrying it would never succeed.
 */
function errorInHttpBody(error: unknown): { code: number; message: string; data?: unknown } | undefined {
  if (!(error instanceof SdkHttpError) || typeof error.data.text !== "string") return undefined;
  let body: unknown;
  try {
    body = JSON.parse(error.data.text);
  } catch {
    return undefined;
  }
  const found = (body as { jsonrpc?: unknown; error?: unknown } | null)?.error as
    | { code?: unknown; message?: unknown; data?: unknown }
    | undefined;
  if ((body as { jsonrpc?: unknown }).jsonrpc !== "2.0" || typeof found !== "object" || found === null)
    return undefined;
  if (!Number.isSafeInteger(found.code)) return undefined;
  return {
    code: found.code as number,
    message: typeof found.message === "string" ? found.message : "",
    ...(found.data === undefined ? {} : { data: found.data }),
  };
}

/** Errors after which the same request will never succeed: the subscription ends with them. */
export function isFinal(error: EventsClientError): boolean {
  switch (error.code) {
    case "ERR_EVENTS_UNREACHABLE":
    case "ERR_EVENTS_SERVER_ERROR":
    case "ERR_EVENTS_CURSOR_EXPIRED":
    case "ERR_EVENTS_PROTOCOL":
      return false;
    default:
      return true;
  }
}
