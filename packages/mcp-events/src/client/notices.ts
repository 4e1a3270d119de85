import type { DeliveryMode, DeliveryStatus } from "../protocol/model.js";
import type { EventsClientError, EventsClientErrorCode } from "./errors.js";

/**
 * What a subscription tells the app besides events. A `gap` means events may have been missed
 * (the cursor expired or the server truncated): read authoritative state with tools.
 */
export type SubscriptionNotice =
  | { type: "mode"; mode: DeliveryMode; fallbackFrom?: DeliveryMode; reason?: EventsClientErrorCode }
  | { type: "gap"; reason: "cursor-expired" | "truncated" }
  | {
      type: "reconnecting";
      reason: "heartbeat-missed" | "stream-ended" | "unreachable" | "server-error";
      attempt: number;
    }
  | { type: "delivery-status"; status: DeliveryStatus }
  | { type: "secret-adopted"; origin: "server" | "client" }
  /** A transient `notifications/events/error` or webhook error envelope: the subscription goes on. */
  | { type: "error"; error: EventsClientError };
