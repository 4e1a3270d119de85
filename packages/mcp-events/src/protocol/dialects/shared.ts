import { z } from "zod";
import { compact, type eventOccurrence, listParams, nonEmpty, parseOrInvalid } from "../common.js";
import type { Codec } from "../dialect.js";
import type { EventOccurrence, ListQuery } from "../model.js";

// What the sketch and SEP-3415 write the same way; what differs stays in each dialect's file.

/** An event as both dialects write it: the occurrence's own fields, in this order. */
export function occurrence(event: EventOccurrence) {
  return compact({
    eventId: event.eventId,
    name: event.name,
    timestamp: event.timestamp,
    data: event.data,
    cursor: event.cursor,
  });
}

export const decodeOccurrence = (wire: z.output<typeof eventOccurrence>): EventOccurrence =>
  compact({ ...wire });

/** `events/list` params: an optional cursor in both dialects. */
export const listParamsCodec: Codec<ListQuery> = {
  decode: (wire) => compact({ cursor: parseOrInvalid(listParams, wire, "events/list params")?.cursor }),
  encode: (query) => compact({ cursor: query.cursor }),
};

export const maxEvents = z.number().int().positive().optional();

/** `delivery` of events/subscribe; the dialects differ only in what a secret must look like. */
export const webhookDelivery = <S extends z.ZodType>(secret: S) =>
  z.object({ mode: z.literal("webhook"), url: nonEmpty, secret });

/** `delivery` of events/unsubscribe. */
export const unsubscribeDelivery = z.object({ mode: z.literal("webhook").optional(), url: nonEmpty });
