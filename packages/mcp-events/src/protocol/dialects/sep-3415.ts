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
import type { EventsDialect } from "../dialect.js";
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

/**
 * The five general codes as the deployed clients use them (ChatGPT, the AI SDK, the conformance
 * scenarios): -32011..-32015. The draft SEP's provisional -32023..-32027 are still understood
 * when decoding (docs/decisions.md, issue 15).
 */
const SEP_CODES = {
  NotFound: -32011,
  Forbidden: -32012,
  ResourceExhausted: -32013,
  Unsupported: -32014,
  CallbackEndpointError: -32015,
} as const;
const DRAFT_CODES: Record<number, number> = {
  [-32023]: SEP_CODES.NotFound,
  [-32024]: SEP_CODES.Forbidden,
  [-32025]: SEP_CODES.ResourceExhausted,
  [-32026]: SEP_CODES.Unsupported,
  [-32027]: SEP_CODES.CallbackEndpointError,
};

/** Where each sketch error lands among SEP-3415's general codes, with the typed `data` it adds. */
const TO_SEP: Record<EventsErrorName, { code: number; message: string; data?: JsonObject }> = {
  InvalidParams: { code: -32602, message: "Invalid params" },
  EventNotFound: { code: SEP_CODES.NotFound, message: "NotFound", data: { kind: "event" } },
  SubscriptionNotFound: { code: SEP_CODES.NotFound, message: "NotFound", data: { kind: "subscription" } },
  Unauthorized: { code: SEP_CODES.Forbidden, message: "Forbidden" },
  TooManySubscriptions: {
    code: SEP_CODES.ResourceExhausted,
    message: "ResourceExhausted",
    data: { resource: "subscriptions" },
  },
  DeliveryModeUnsupported: {
    code: SEP_CODES.Unsupported,
    message: "Unsupported",
    data: { reason: "delivery_mode" },
  },
  CursorExpired: { code: SEP_CODES.Unsupported, message: "Unsupported", data: { reason: "cursor_expired" } },
  InvalidCallbackUrl: { code: SEP_CODES.CallbackEndpointError, message: "CallbackEndpointError" },
};

function sepErrorName(error: Pick<ErrorObject, "code" | "data">): EventsErrorName | undefined {
  const data = error.data ?? {};
  switch (DRAFT_CODES[error.code] ?? error.code) {
    case -32602:
      return "InvalidParams";
    case SEP_CODES.NotFound:
      return data.kind === "subscription" ? "SubscriptionNotFound" : "EventNotFound";
    case SEP_CODES.Forbidden:
      return "Unauthorized";
    case SEP_CODES.ResourceExhausted:
      return "TooManySubscriptions";
    case SEP_CODES.Unsupported:
      return data.reason === "cursor_expired" ? "CursorExpired" : "DeliveryModeUnsupported";
    case SEP_CODES.CallbackEndpointError:
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

export const sep3415: EventsDialect = {
  name: "sep-3415",
  signature: "standard",
  cursorExpiry: "truncate",
  error(kind, data, message) {
    const mapped = TO_SEP[kind];
    const merged = mapped.data || data ? { ...mapped.data, ...data } : undefined;
    return compact({ code: mapped.code, message: message ?? mapped.message, data: merged }) as ErrorObject;
  },
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
