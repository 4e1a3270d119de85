import { occurrence } from "../protocol/dialects/shared.js";
import {
  EVENTS_NOTIFICATIONS,
  type EventOccurrence,
  type EventsDialect,
  type JsonObject,
  type RequestId,
} from "../protocol/index.js";

// JSON-RPC notifications as JSON text, for streams whose response the extension writes itself.

/** A JSON-RPC notification, as JSON text. */
export function notificationJson(method: string, params: JsonObject): string {
  return `{"jsonrpc":"2.0","method":${JSON.stringify(method)},"params":${JSON.stringify(params)}}`;
}

/** The occurrence fields both dialects write (`occurrence()`): the part every stream shares. */
const OCCURRENCE_KEYS = new Set(["eventId", "name", "timestamp", "data", "cursor"]);
const PROBE: EventOccurrence = { eventId: "-", name: "-", timestamp: "-", data: {}, cursor: "-" };
const occurrenceText = new WeakMap<EventOccurrence, string>();

/** An event's occurrence as JSON text, serialised once however many streams carry it. */
function occurrenceJson(event: EventOccurrence): string {
  let text = occurrenceText.get(event);
  if (text === undefined) {
    text = JSON.stringify(occurrence(event));
    occurrenceText.set(event, text);
  }
  return text;
}

/**
 * `notifications/events/event` of one stream as JSON text: the stream's own fields (its request
 * id and route, in its dialect) are serialised once per stream and joined to the event's shared
 * text. The same message as `wire.stream.event.encode`, keys in another order.
 */
export function eventNotifications(
  wire: EventsDialect,
  requestId: RequestId,
  routeId: string | undefined,
): (event: EventOccurrence) => string {
  const probe = wire.stream.event.encode({
    requestId,
    ...(routeId === undefined ? {} : { routeId }),
    event: PROBE,
  });
  const own: JsonObject = {};
  for (const [key, value] of Object.entries(probe)) if (!OCCURRENCE_KEYS.has(key)) own[key] = value;
  const ownText = JSON.stringify(own);
  const head = `{"jsonrpc":"2.0","method":"${EVENTS_NOTIFICATIONS.event}","params":`;
  if (ownText === "{}") return (event) => `${head}${occurrenceJson(event)}}`;
  const opening = `${head}${ownText.slice(0, -1)},`;
  return (event) => `${opening}${occurrenceJson(event).slice(1)}}`;
}
