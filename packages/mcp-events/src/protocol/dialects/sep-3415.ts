import { z } from "zod";
import {
  compact,
  cursorParam,
  deliveryStatus,
  errorObject,
  eventDescriptor,
  eventOccurrence,
  jsonObject,
  nonEmpty,
  parseOrInvalid,
  requestId,
} from "../common.js";
import type { ErrorCodeProfile, EventsDialect } from "../dialect.js";
import type { EventsErrorName } from "../errors.js";
import { SUBSCRIPTION_ID_META } from "../methods.js";
import type { ErrorObject, JsonObject, RequestId, WebhookBody } from "../model.js";
import {
  decodeOccurrence,
  listParamsCodec,
  maxEvents,
  occurrence,
  unsubscribeDelivery,
  webhookDelivery,
} from "./shared.js";

/**
 * SEP-3415 ("Events Extension", 2026-10-05) as far as it changes the wire: `arguments`,
 * milliseconds (`nextPollMs`, `maxAgeMs`, `ttlMs`), `truncated` instead of CursorExpired, a
 * client-supplied `whsec_` secret, a server-derived subscription id, stream routing through
 * `_meta["io.modelcontextprotocol/subscriptionId"]`, Standard Webhooks signatures, control
 * envelopes with a top-level `type`, `resultType: "complete"` and five general error codes.
 */

/** Standard Webhooks secret: `whsec_` + base64 of 24..64 bytes. */
export const WHSEC = /^whsec_[A-Za-z0-9+/]{32,88}={0,2}$/;

/** SEP-3415's five general errors, beside JSON-RPC's invalid params. */
type GeneralError = "NotFound" | "Forbidden" | "ResourceExhausted" | "Unsupported" | "CallbackEndpointError";

/**
 * Their numbers under each profile: the deployed clients' -32011..-32015 (ChatGPT, the AI SDK,
 * the conformance scenarios) and the draft SEP's provisional -32023..-32027. Either is understood
 * when decoding (docs/decisions.md: the Events server's spec details).
 */
export const SEP_ERROR_CODES: Readonly<Record<ErrorCodeProfile, Readonly<Record<GeneralError, number>>>> = {
  deployed: {
    NotFound: -32011,
    Forbidden: -32012,
    ResourceExhausted: -32013,
    Unsupported: -32014,
    CallbackEndpointError: -32015,
  },
  "sep-3415": {
    NotFound: -32023,
    Forbidden: -32024,
    ResourceExhausted: -32025,
    Unsupported: -32026,
    CallbackEndpointError: -32027,
  },
};

const GENERAL_OF_CODE = new Map<number, GeneralError>(
  Object.values(SEP_ERROR_CODES).flatMap((codes) =>
    Object.entries(codes).map(([name, code]) => [code, name as GeneralError] as const),
  ),
);

/** Where each sketch error lands among SEP-3415's general errors. */
const TO_GENERAL: Record<Exclude<EventsErrorName, "InvalidParams">, GeneralError> = {
  EventNotFound: "NotFound",
  SubscriptionNotFound: "NotFound",
  Unauthorized: "Forbidden",
  TooManySubscriptions: "ResourceExhausted",
  DeliveryModeUnsupported: "Unsupported",
  CursorExpired: "Unsupported",
  InvalidCallbackUrl: "CallbackEndpointError",
};

/**
 * The typed `data` SEP-3415 gives each general error, made from the model's: NotFound's `kind`,
 * ResourceExhausted's `limit` (the limit's name) and `max` (its number), Unsupported's `feature`
 * and `value`.
 */
function sepData(kind: EventsErrorName, data: JsonObject = {}): JsonObject | undefined {
  switch (kind) {
    case "EventNotFound":
      return { kind: "event", ...data };
    case "SubscriptionNotFound":
      return { kind: "subscription", ...data };
    case "TooManySubscriptions": {
      // A bare number (an author's `{ limit: 5 }`) is the max of a limit it did not name.
      const { limit, ...rest } = data;
      if (typeof limit === "number") return { ...rest, limit: "subscriptions", max: limit };
      return { limit: limit ?? "subscriptions", ...rest };
    }
    case "DeliveryModeUnsupported": {
      const { mode, ...rest } = data;
      return { feature: "delivery.mode", ...(mode === undefined ? {} : { value: mode }), ...rest };
    }
    case "CursorExpired":
      return { feature: "cursor", reason: "cursor_expired", ...data };
    default:
      return Object.keys(data).length === 0 ? undefined : data;
  }
}

function sepErrorName(error: Pick<ErrorObject, "code" | "data">): EventsErrorName | undefined {
  const data = error.data ?? {};
  if (error.code === -32602) return "InvalidParams";
  switch (GENERAL_OF_CODE.get(error.code)) {
    case "NotFound":
      return data.kind === "subscription" ? "SubscriptionNotFound" : "EventNotFound";
    case "Forbidden":
      return "Unauthorized";
    case "ResourceExhausted":
      return "TooManySubscriptions";
    case "Unsupported":
      return data.feature === "cursor" || data.reason === "cursor_expired"
        ? "CursorExpired"
        : "DeliveryModeUnsupported";
    case "CallbackEndpointError":
      return "InvalidCallbackUrl";
    default:
      return undefined;
  }
}

const meta = z.object({ [SUBSCRIPTION_ID_META]: requestId });
const routed = { _meta: meta };
const subscription = {
  name: nonEmpty,
  arguments: jsonObject.optional(),
  cursor: cursorParam,
  maxAgeMs: z.number().int().nonnegative().optional(),
};
const complete = { resultType: z.literal("complete").optional() };

export const sepSchemas = {
  pollParams: z.object({ ...subscription, maxEvents }),
  pollResult: z.object({
    events: z.array(eventOccurrence),
    cursor: z.string().nullable(),
    truncated: z.boolean().optional(),
    hasMore: z.boolean(),
    nextPollMs: z.number().nonnegative(),
    ...complete,
  }),
  streamParams: z.object(subscription),
  active: z.object({
    cursor: z.string().nullable().optional(),
    truncated: z.boolean().optional(),
    ...routed,
  }),
  event: eventOccurrence.extend(routed),
  problem: z.object({ error: errorObject, ...routed }),
  heartbeat: z.object({ cursor: z.string().nullable().optional(), ...routed }),
  streamResult: z.object({ ...complete, _meta: meta.partial().optional() }),
  subscribeParams: z.object({
    ...subscription,
    delivery: webhookDelivery(z.string().regex(WHSEC, "must be whsec_ followed by base64 of 24 to 64 bytes")),
    ttlMs: z.number().int().positive().nullable().optional(),
  }),
  subscribeResult: z.object({
    id: nonEmpty,
    refreshBefore: z.string().nullable(),
    cursor: z.string().nullable().optional(),
    truncated: z.boolean().optional(),
    deliveryStatus: deliveryStatus
      .extend({ throttled: z.boolean().optional(), retryAfterMs: z.number().optional() })
      .optional(),
    ...complete,
  }),
  unsubscribeParams: z.object({
    name: nonEmpty,
    arguments: jsonObject.optional(),
    delivery: unsubscribeDelivery,
  }),
  listResult: z.object({ events: z.array(eventDescriptor), nextCursor: z.string().optional(), ...complete }),
  control: z.discriminatedUnion("type", [
    z.object({ type: z.literal("verification"), challenge: nonEmpty }),
    z.object({ type: z.literal("gap"), cursor: z.string().nullable() }),
    z.object({ type: z.literal("terminated"), error: errorObject }),
  ]),
};

const routeMeta = (id: RequestId) => ({ [SUBSCRIPTION_ID_META]: id });
const routeOf = (m: z.output<typeof meta>) => m[SUBSCRIPTION_ID_META] as RequestId;

/** The event, its `arguments` (the model's `params`) and where to start, as the model has them. */
// Decoded requests are written out field by field: `{ ...x, more }` is a slow path in V8 (about
// 15 µs a request, more than the rest of an empty events/poll).
const paramsOf = (p: { arguments?: JsonObject | undefined }): JsonObject => p.arguments ?? {};
const cursorOf = (p: { cursor?: string | null | undefined }): string | null => p.cursor ?? null;

function problemCodec(what: string) {
  return {
    decode(wire: unknown) {
      const n = parseOrInvalid(sepSchemas.problem, wire, what);
      return { requestId: routeOf(n._meta), error: compact({ ...n.error }) };
    },
    encode: (n: { requestId: RequestId; error: ErrorObject }) => ({
      error: n.error,
      _meta: routeMeta(n.requestId),
    }),
  };
}

/** SEP-3415 with its general errors numbered as `profile` says; everything else is the same. */
function sep3415With(profile: ErrorCodeProfile): EventsDialect {
  const codes = SEP_ERROR_CODES[profile];
  return {
    ...sep3415Wire,
    error(kind, data, message) {
      if (kind === "InvalidParams")
        return compact({ code: -32602, message: message ?? "Invalid params", data }) as ErrorObject;
      const general = TO_GENERAL[kind];
      return compact({
        code: codes[general],
        message: message ?? general,
        data: sepData(kind, data),
      }) as ErrorObject;
    },
  };
}

const sep3415Wire: Omit<EventsDialect, "error"> = {
  name: "sep-3415",
  signature: "standard",
  cursorExpiry: "truncate",
  errorName: sepErrorName,
  list: {
    params: listParamsCodec,
    result: {
      decode(wire) {
        const { resultType: _, ...r } = parseOrInvalid(sepSchemas.listResult, wire, "events/list result");
        return compact({ ...r });
      },
      encode: (o) => compact({ events: o.events, nextCursor: o.nextCursor, resultType: "complete" }),
    },
  },
  poll: {
    params: {
      decode(wire) {
        const p = parseOrInvalid(sepSchemas.pollParams, wire, "events/poll params");
        return compact({
          name: p.name,
          params: paramsOf(p),
          cursor: cursorOf(p),
          maxEvents: p.maxEvents,
          maxAgeMs: p.maxAgeMs,
        });
      },
      encode: (q) =>
        compact({
          name: q.name,
          arguments: q.params,
          cursor: q.cursor,
          maxEvents: q.maxEvents,
          maxAgeMs: q.maxAgeMs,
        }),
    },
    result: {
      decode(wire) {
        const r = parseOrInvalid(sepSchemas.pollResult, wire, "events/poll result");
        return {
          events: r.events.map(decodeOccurrence),
          cursor: r.cursor,
          hasMore: r.hasMore,
          nextPollMs: r.nextPollMs,
          truncated: r.truncated ?? false,
        };
      },
      encode: (o) => ({
        events: o.events.map(occurrence),
        cursor: o.cursor,
        truncated: o.truncated,
        hasMore: o.hasMore,
        nextPollMs: o.nextPollMs,
        resultType: "complete",
      }),
    },
  },
  stream: {
    params: {
      decode(wire) {
        const p = parseOrInvalid(sepSchemas.streamParams, wire, "events/stream params");
        return compact({ name: p.name, params: paramsOf(p), cursor: cursorOf(p), maxAgeMs: p.maxAgeMs });
      },
      encode: (q) => compact({ name: q.name, arguments: q.params, cursor: q.cursor, maxAgeMs: q.maxAgeMs }),
    },
    active: {
      decode(wire) {
        const n = parseOrInvalid(sepSchemas.active, wire, "notifications/events/active");
        return { requestId: routeOf(n._meta), cursor: n.cursor ?? null, truncated: n.truncated ?? false };
      },
      encode: (n) => ({ cursor: n.cursor, truncated: n.truncated, _meta: routeMeta(n.requestId) }),
    },
    event: {
      decode(wire) {
        const { _meta, ...event } = parseOrInvalid(sepSchemas.event, wire, "notifications/events/event");
        return { requestId: routeOf(_meta), event: decodeOccurrence(event) };
      },
      encode: (n) => Object.assign(occurrence(n.event), { _meta: routeMeta(n.requestId) }),
    },
    error: problemCodec("notifications/events/error"),
    terminated: problemCodec("notifications/events/terminated"),
    heartbeat: {
      decode(wire) {
        const n = parseOrInvalid(sepSchemas.heartbeat, wire, "notifications/events/heartbeat");
        return compact({ requestId: routeOf(n._meta), cursor: n.cursor });
      },
      encode: (n) => compact({ cursor: n.cursor, _meta: routeMeta(n.requestId) }),
    },
    result: {
      decode(wire) {
        const r = parseOrInvalid(sepSchemas.streamResult, wire, "events/stream result");
        return compact({ requestId: r._meta?.[SUBSCRIPTION_ID_META] as RequestId | undefined });
      },
      encode: (n) =>
        n.requestId === undefined
          ? { resultType: "complete" }
          : { resultType: "complete", _meta: routeMeta(n.requestId) },
    },
  },
  subscribe: {
    params: {
      decode(wire) {
        const p = parseOrInvalid(sepSchemas.subscribeParams, wire, "events/subscribe params");
        return compact({
          name: p.name,
          params: paramsOf(p),
          cursor: cursorOf(p),
          url: p.delivery.url,
          secret: p.delivery.secret,
          ttlMs: p.ttlMs,
          maxAgeMs: p.maxAgeMs,
        });
      },
      encode: (q) =>
        compact({
          name: q.name,
          arguments: q.params,
          delivery: compact({ mode: "webhook", url: q.url, secret: q.secret }),
          cursor: q.cursor,
          ttlMs: q.ttlMs,
          maxAgeMs: q.maxAgeMs,
        }),
    },
    result: {
      decode(wire) {
        const { resultType: _, ...r } = parseOrInvalid(
          sepSchemas.subscribeResult,
          wire,
          "events/subscribe result",
        );
        return compact({ ...r });
      },
      encode: (o) =>
        compact({
          id: o.id,
          refreshBefore: o.refreshBefore,
          cursor: o.cursor ?? null,
          truncated: o.truncated ?? false,
          deliveryStatus: o.deliveryStatus,
          resultType: "complete",
        }),
    },
  },
  unsubscribe: {
    params: {
      decode(wire) {
        const p = parseOrInvalid(sepSchemas.unsubscribeParams, wire, "events/unsubscribe params");
        return { name: p.name, params: p.arguments ?? {}, url: p.delivery.url };
      },
      encode: (q) => ({ name: q.name, arguments: q.params ?? {}, delivery: { url: q.url } }),
    },
    result: { decode: () => ({}), encode: () => ({ resultType: "complete" }) },
  },
  webhook: {
    encode(body: WebhookBody) {
      switch (body.type) {
        case "event":
          return occurrence(body.event);
        case "error":
          return { type: "terminated", error: body.error };
        case "verification":
          return { type: "verification", challenge: body.challenge };
        case "gap":
          return { type: "gap", cursor: body.cursor };
      }
    },
    decode(json, headerSubscriptionId = ""): WebhookBody {
      const object = parseOrInvalid(jsonObject, json, "webhook body");
      const subscriptionId = typeof object.id === "string" ? object.id : headerSubscriptionId;
      if (typeof object.type === "string") {
        const c = parseOrInvalid(sepSchemas.control, object, "control envelope");
        if (c.type === "verification")
          return { type: "verification", subscriptionId, challenge: c.challenge };
        if (c.type === "gap") return { type: "gap", subscriptionId, cursor: c.cursor };
        return { type: "error", subscriptionId, error: compact({ ...c.error }) };
      }
      const event = parseOrInvalid(eventOccurrence, object, "event delivery");
      return { type: "event", subscriptionId, event: decodeOccurrence(event) };
    },
  },
};

const BY_PROFILE: Readonly<Record<ErrorCodeProfile, EventsDialect>> = {
  deployed: sep3415With("deployed"),
  "sep-3415": sep3415With("sep-3415"),
};

/** SEP-3415 as the deployed clients number its errors (-32011..-32015). */
export const sep3415: EventsDialect = BY_PROFILE.deployed;

/** SEP-3415 with its errors numbered by `profile` (the draft's -32023..-32027 for "sep-3415"). */
export function sep3415Dialect(profile: ErrorCodeProfile = "deployed"): EventsDialect {
  const found = Object.hasOwn(BY_PROFILE, profile) ? BY_PROFILE[profile] : undefined;
  if (!found) throw new Error(`unknown error-code profile ${String(profile)}: use "deployed" or "sep-3415"`);
  return found;
}
