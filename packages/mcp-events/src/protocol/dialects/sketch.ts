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
import { EVENTS_ERROR_CODES, eventsErrorName } from "../errors.js";
import type { DeliveryStatus, JsonObject, WebhookBody } from "../model.js";
import {
  decodeOccurrence,
  listParamsCodec,
  maxEvents,
  occurrence,
  unsubscribeDelivery,
  webhookDelivery,
} from "./shared.js";

/**
 * The design sketch of 2026-02-19, as written: `params`, `nextPollSeconds`, client-chosen
 * subscription `id`, server-generated secret, X-MCP-* signatures, codes -32011..-32017.
 */

const routeId = z.string().optional();
const subscription = {
  name: nonEmpty,
  params: jsonObject.optional(),
  cursor: cursorParam,
};
/**
 * Not in the sketch of 2026-02-19 (its later revisions added a replay floor): accepted on poll and
 * stream because the model has it, and refused when it is not a non-negative integer rather than
 * dropped unseen.
 */
const maxAgeMs = z.number().int().nonnegative().optional();

export const sketchSchemas = {
  pollParams: z.object({
    id: routeId,
    ...subscription,
    maxEvents,
    maxAgeMs,
  }),
  pollResult: z.object({
    id: routeId,
    events: z.array(eventOccurrence),
    cursor: z.string().nullable(),
    hasMore: z.boolean(),
    nextPollSeconds: z.number().nonnegative(),
  }),
  streamParams: z.object({ id: routeId, ...subscription, maxAgeMs }),
  active: z.object({ requestId, id: routeId, cursor: z.string().nullable() }),
  event: eventOccurrence.extend({ requestId, id: routeId }),
  problem: z.object({ requestId, id: routeId, error: errorObject }),
  heartbeat: z.object({ requestId }),
  streamResult: z.object({ _meta: jsonObject.optional() }),
  subscribeParams: z.object({
    id: nonEmpty,
    ...subscription,
    delivery: webhookDelivery(nonEmpty.optional()),
  }),
  subscribeResult: z.object({
    id: nonEmpty,
    secret: z.string().optional(),
    refreshBefore: z.string(),
    deliveryStatus: deliveryStatus.optional(),
  }),
  unsubscribeParams: z.object({
    id: nonEmpty,
    delivery: unsubscribeDelivery,
  }),
  listResult: z.object({ events: z.array(eventDescriptor), nextCursor: z.string().optional() }),
  webhookEvent: eventOccurrence.extend({ id: nonEmpty }),
  webhookError: z.object({ id: nonEmpty, error: errorObject }),
  webhookVerification: z.object({ type: z.literal("verification"), id: nonEmpty, challenge: nonEmpty }),
};

/** The event, its arguments (`params`) and where to start, as the model has them. */
// Decoded requests are written out field by field: `{ ...x, more }` is a slow path in V8.
const paramsOf = (p: { params?: JsonObject | undefined }): JsonObject => p.params ?? {};
const cursorOf = (p: { cursor?: string | null | undefined }): string | null => p.cursor ?? null;

export const sketch: EventsDialect = {
  name: "sketch",
  signature: "mcp",
  cursorExpiry: "error",
  error: (kind, data, message) =>
    compact({ code: EVENTS_ERROR_CODES[kind], message: message ?? kind, data }) as {
      code: number;
      message: string;
    },
  errorName: (error) => eventsErrorName(error.code),
  list: {
    params: listParamsCodec,
    result: {
      decode: (wire) => compact({ ...parseOrInvalid(sketchSchemas.listResult, wire, "events/list result") }),
      encode: (outcome) => compact({ events: outcome.events, nextCursor: outcome.nextCursor }),
    },
  },
  poll: {
    params: {
      decode(wire) {
        const p = parseOrInvalid(sketchSchemas.pollParams, wire, "events/poll params");
        return compact({
          routeId: p.id,
          name: p.name,
          params: paramsOf(p),
          cursor: cursorOf(p),
          maxEvents: p.maxEvents,
          maxAgeMs: p.maxAgeMs,
        });
      },
      encode: (q) =>
        compact({ id: q.routeId, name: q.name, params: q.params, cursor: q.cursor, maxEvents: q.maxEvents }),
    },
    result: {
      decode(wire) {
        const r = parseOrInvalid(sketchSchemas.pollResult, wire, "events/poll result");
        return compact({
          routeId: r.id,
          events: r.events.map(decodeOccurrence),
          cursor: r.cursor,
          hasMore: r.hasMore,
          nextPollMs: r.nextPollSeconds * 1000,
          truncated: false,
        });
      },
      encode: (o) =>
        compact({
          id: o.routeId,
          events: o.events.map(occurrence),
          cursor: o.cursor,
          hasMore: o.hasMore,
          nextPollSeconds: Math.ceil(o.nextPollMs / 1000),
        }),
    },
  },
  stream: {
    params: {
      decode(wire) {
        const p = parseOrInvalid(sketchSchemas.streamParams, wire, "events/stream params");
        return compact({
          routeId: p.id,
          name: p.name,
          params: paramsOf(p),
          cursor: cursorOf(p),
          maxAgeMs: p.maxAgeMs,
        });
      },
      encode: (q) => compact({ id: q.routeId, name: q.name, params: q.params, cursor: q.cursor }),
    },
    active: {
      decode(wire) {
        const n = parseOrInvalid(sketchSchemas.active, wire, "notifications/events/active");
        return compact({ requestId: n.requestId, routeId: n.id, cursor: n.cursor, truncated: false });
      },
      encode: (n) => compact({ requestId: n.requestId, id: n.routeId, cursor: n.cursor }),
    },
    event: {
      decode(wire) {
        const { requestId, id, ...event } = parseOrInvalid(
          sketchSchemas.event,
          wire,
          "notifications/events/event",
        );
        return compact({ requestId, routeId: id, event: decodeOccurrence(event) });
      },
      encode: (n) => compact({ requestId: n.requestId, id: n.routeId, ...occurrence(n.event) }),
    },
    error: problemCodec("notifications/events/error"),
    terminated: problemCodec("notifications/events/terminated"),
    heartbeat: {
      decode: (wire) => parseOrInvalid(sketchSchemas.heartbeat, wire, "notifications/events/heartbeat"),
      encode: (n) => ({ requestId: n.requestId }),
    },
    result: {
      // The sketch's StreamEventsResult carries nothing: the request id is the JSON-RPC id.
      decode: (wire) => {
        parseOrInvalid(sketchSchemas.streamResult, wire, "events/stream result");
        return {};
      },
      encode: () => ({ _meta: {} }),
    },
  },
  subscribe: {
    params: {
      decode(wire) {
        const p = parseOrInvalid(sketchSchemas.subscribeParams, wire, "events/subscribe params");
        return compact({
          id: p.id,
          name: p.name,
          params: paramsOf(p),
          cursor: cursorOf(p),
          url: p.delivery.url,
          secret: p.delivery.secret,
        });
      },
      encode: (q) =>
        compact({
          id: q.id,
          name: q.name,
          params: q.params,
          delivery: compact({ mode: "webhook", url: q.url, secret: q.secret }),
          cursor: q.cursor,
        }),
    },
    result: {
      decode: (wire) =>
        compact({ ...parseOrInvalid(sketchSchemas.subscribeResult, wire, "events/subscribe result") }),
      encode: (o) =>
        compact({
          id: o.id,
          secret: o.secret,
          refreshBefore: o.refreshBefore ?? undefined,
          deliveryStatus: sketchDeliveryStatus(o.deliveryStatus),
        }),
    },
  },
  unsubscribe: {
    params: {
      decode(wire) {
        const p = parseOrInvalid(sketchSchemas.unsubscribeParams, wire, "events/unsubscribe params");
        return { id: p.id, url: p.delivery.url };
      },
      encode: (q) => ({ id: q.id, delivery: { url: q.url } }),
    },
    result: { decode: () => ({}), encode: () => ({}) },
  },
  webhook: {
    encode(body: WebhookBody) {
      switch (body.type) {
        case "event":
          return { id: body.subscriptionId, ...occurrence(body.event) };
        case "error":
          return { id: body.subscriptionId, error: body.error };
        case "verification":
          return { type: "verification", id: body.subscriptionId, challenge: body.challenge };
        case "gap":
          // The sketch has no gap envelope: an expired cursor is the CursorExpired error envelope.
          return {
            id: body.subscriptionId,
            error: { code: EVENTS_ERROR_CODES.CursorExpired, message: "CursorExpired" },
          };
      }
    },
    decode(json): WebhookBody {
      const object = parseOrInvalid(jsonObject, json, "webhook body");
      if (object.type === "verification") {
        const v = parseOrInvalid(sketchSchemas.webhookVerification, object, "verification body");
        return { type: "verification", subscriptionId: v.id, challenge: v.challenge };
      }
      if ("error" in object) {
        const e = parseOrInvalid(sketchSchemas.webhookError, object, "error envelope");
        return { type: "error", subscriptionId: e.id, error: compact({ ...e.error }) };
      }
      const { id, ...event } = parseOrInvalid(sketchSchemas.webhookEvent, object, "event delivery");
      return { type: "event", subscriptionId: id, event: decodeOccurrence(event) };
    },
  },
};

/** The sketch's deliveryStatus predates SEP-3415's `throttled` and `retryAfterMs`. */
function sketchDeliveryStatus(status: DeliveryStatus | undefined): DeliveryStatus | undefined {
  if (status === undefined) return undefined;
  const { throttled: _throttled, retryAfterMs: _retryAfterMs, ...sketch } = status;
  return sketch;
}

function problemCodec(what: string) {
  return {
    decode(wire: unknown) {
      const n = parseOrInvalid(sketchSchemas.problem, wire, what);
      return compact({ requestId: n.requestId, routeId: n.id, error: compact({ ...n.error }) });
    },
    encode: (n: { requestId: string | number; routeId?: string; error: { code: number; message: string } }) =>
      compact({ requestId: n.requestId, id: n.routeId, error: n.error }),
  };
}
