/**
 * Delivery mode selection (sketch, "Delivery Mode Selection"): the event type's advertised modes
 * intersected with what this client can do, preferring webhook, then push, then poll. A mode the
 * caller forces must be possible on both sides, else the subscription is refused with the reason.
 */
import type { DeliveryMode } from "../protocol/model.js";
import { EventsClientError } from "./errors.js";

export interface ClientAbilities {
  /** A WebhookConfig (public URL + local receiver) is set. */
  webhook: boolean;
  /** The transport streams (stdio and Streamable HTTP do). */
  push: boolean;
}

const PREFERENCE: readonly DeliveryMode[] = ["webhook", "push", "poll"];

/** The modes to try, best first; a forced mode yields only itself. */
export function deliveryCandidates(
  eventName: string,
  advertised: readonly DeliveryMode[],
  abilities: ClientAbilities,
  forced?: DeliveryMode,
): DeliveryMode[] {
  const clientCan = (mode: DeliveryMode) => mode === "poll" || abilities[mode];
  if (forced !== undefined) {
    if (!PREFERENCE.includes(forced)) {
      throw new EventsClientError(
        "ERR_EVENTS_INVALID_ARGUMENT",
        `unknown delivery mode ${JSON.stringify(forced)}`,
      );
    }
    if (!advertised.includes(forced)) {
      throw new EventsClientError(
        "ERR_EVENTS_DELIVERY_MODE_UNAVAILABLE",
        `${forced} delivery was asked for, but the server offers ${eventName} by ${advertised.join(", ") || "no mode"}`,
      );
    }
    if (!clientCan(forced)) {
      throw new EventsClientError(
        "ERR_EVENTS_DELIVERY_MODE_UNAVAILABLE",
        forced === "webhook"
          ? "webhook delivery was asked for, but this client has no webhook config (a public URL and a receiver)"
          : "push delivery was asked for, but this client's push is turned off",
      );
    }
    return [forced];
  }
  const modes = PREFERENCE.filter((mode) => advertised.includes(mode) && clientCan(mode));
  if (modes.length === 0) {
    // The sketch makes poll mandatory; SEP-3415 does not, so a webhook-only type can be out of reach.
    throw new EventsClientError(
      "ERR_EVENTS_DELIVERY_MODE_UNAVAILABLE",
      `the server offers ${eventName} by ${advertised.join(", ") || "no mode"}, none of which this client can use`,
    );
  }
  return modes;
}
