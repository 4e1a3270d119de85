/**
 * SEP-3415 lets an event occurrence's `cursor` be `null` or absent (event types without replay;
 * absent means null), and servers write either. The dialects' codecs read an occurrence's cursor
 * only as a string or absent, and a poll result's, an `active`'s and a gap envelope's only as a
 * string or null. So what the client receives is brought to that form before it is decoded: a
 * null occurrence cursor is dropped, an absent position becomes null. Each function returns a
 * copy when it changes anything and the value itself otherwise; anything that is not the object
 * expected is left for the codec to refuse.
 */

type Wire = Record<string, unknown>;

const isObject = (value: unknown): value is Wire =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** An occurrence (a stream `event`'s params, a webhook event body, a poll result's entry). */
export function occurrenceCursor(wire: unknown): unknown {
  if (!isObject(wire) || wire.cursor !== null) return wire;
  const { cursor: _none, ...rest } = wire;
  return rest;
}

/** A position (`active`, a gap envelope, a poll result): absent is null. */
function positionCursor(wire: unknown): unknown {
  if (!isObject(wire) || wire.cursor !== undefined) return wire;
  return { ...wire, cursor: null };
}

/** An `events/poll` result: its events' cursors and its own. */
export function pollResultCursors(wire: unknown): unknown {
  if (!isObject(wire)) return wire;
  const { events } = wire;
  const nullInside =
    Array.isArray(events) && events.some((event) => isObject(event) && event.cursor === null);
  return positionCursor(nullInside ? { ...wire, events: events.map(occurrenceCursor) } : wire);
}

/** The params of a stream notification, by its kind. */
export function notificationCursors(kind: string, params: Wire): Wire {
  if (kind === "event") return occurrenceCursor(params) as Wire;
  if (kind === "active") return positionCursor(params) as Wire;
  return params;
}

/** A webhook body: an event (no `type`) or a gap envelope. */
export function webhookBodyCursors(json: unknown): unknown {
  if (!isObject(json)) return json;
  if (json.type === undefined) return occurrenceCursor(json);
  if (json.type === "gap") return positionCursor(json);
  return json;
}
