/** What callers hand the engine to deliver, and what an enqueue answers. */

export interface DeliveryEvent {
  type: string;
  data: Record<string, unknown>;
  /** When it happened (ISO 8601); now by default. */
  timestamp?: string;
  /** MCP channel: the event's id, which receivers deduplicate by. */
  eventId?: string;
  /** MCP channel: the safe-to-persist watermark delivered with the event. */
  cursor?: string;
  /**
   * MCP channels: send the signed error envelope instead of an event (the sketch's `{id, error}`,
   * SEP-3415's `{type: "terminated", error}`).
   */
  error?: { code: number; message: string; data?: Record<string, unknown> };
  /** `mcp-standard` only: SEP-3415's `{type: "gap", cursor}` envelope instead of an event. */
  gap?: { cursor: string | null };
}

/** One event for one subscription, for `enqueueMany`. */
export interface EnqueueItem {
  subscriptionId: string;
  event: DeliveryEvent;
}

/** queued: a new row; coalesced: added to a waiting matches doorbell; dropped: the subscription ended. */
export type EnqueueResult = "queued" | "coalesced" | "dropped";
