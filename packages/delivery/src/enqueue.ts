import { mcpEnvelope, pushEnvelope } from "./channels.js";
import { MATCHES_EVENT, mergeMatches } from "./coalesce.js";
import type { Db, EngineContext } from "./context.js";
import { DeliveryError } from "./errors.js";
import { randomId } from "./ids.js";
import { insertRow } from "./outbox.js";
import { notifyWorkers } from "./subscriptions.js";

export interface DeliveryEvent {
  type: string;
  data: Record<string, unknown>;
  /** When it happened (ISO 8601); now by default. */
  timestamp?: string;
  /** MCP channel: the event's id, which receivers deduplicate by. */
  eventId?: string;
  /** MCP channel: the safe-to-persist watermark delivered with the event. */
  cursor?: string;
}

/** queued: a new row; coalesced: added to a waiting matches doorbell; dropped: the subscription ended. */
export type EnqueueResult = "queued" | "coalesced" | "dropped";

const MAX_BODY_BYTES = 256 * 1024;

/**
 * Queues one event for one subscription inside the caller's transaction, so the domain change and
 * its doorbell commit or roll back together. Order of enqueue is order of delivery.
 */
export async function enqueue(
  ctx: EngineContext,
  db: Db,
  subscriptionId: string,
  event: DeliveryEvent,
): Promise<EnqueueResult> {
  const now = ctx.clock();
  const sub = await db
    .selectFrom("delivery_subscriptions")
    .select(["channel", "status", "subscriber_id", "agg_new_matches", "agg_latest_delivered_at"])
    .where("id", "=", subscriptionId)
    .executeTakeFirst();
  if (!sub) throw new DeliveryError("ERR_DELIVERY_UNKNOWN_SUBSCRIPTION", "no such subscription");
  if (sub.status === "ended") return "dropped";
  const timestamp = event.timestamp ?? new Date(now).toISOString();

  if (sub.channel === "push" && event.type === MATCHES_EVENT) {
    const report = matchesReport(event.data);
    const merged = mergeMatches({ count: sub.agg_new_matches, latest: sub.agg_latest_delivered_at }, report);
    await db
      .updateTable("delivery_subscriptions")
      .set((eb) => ({
        agg_new_matches: merged.count,
        agg_latest_delivered_at: merged.latest,
        agg_first_at: eb.fn.coalesce("agg_first_at", eb.val(now)),
        wake_at: now,
        updated_at: now,
      }))
      .where("id", "=", subscriptionId)
      .execute();
    await notifyWorkers(ctx, db);
    ctx.metrics.enqueued.inc({
      channel: sub.channel,
      result: sub.agg_new_matches > 0 ? "coalesced" : "queued",
    });
    return sub.agg_new_matches > 0 ? "coalesced" : "queued";
  }

  let webhookId: string;
  let body: string;
  if (sub.channel === "mcp") {
    if (!event.eventId || !/^[\x21-\x7e]{1,256}$/.test(event.eventId)) {
      throw new DeliveryError(
        "ERR_DELIVERY_INVALID_EVENT",
        "an MCP event needs an eventId of 1–256 printable ASCII characters",
      );
    }
    webhookId = event.eventId;
    body = mcpEnvelope(sub.subscriber_id, { ...event, eventId: event.eventId, timestamp });
  } else {
    webhookId = randomId("msg_");
    body = pushEnvelope(event.type, timestamp, event.data);
  }
  if (Buffer.byteLength(body) > MAX_BODY_BYTES) {
    throw new DeliveryError("ERR_DELIVERY_INVALID_EVENT", `an event body is at most ${MAX_BODY_BYTES} bytes`);
  }
  await insertRow(db, subscriptionId, { webhookId, type: event.type, body, now, final: false });
  await notifyWorkers(ctx, db);
  ctx.metrics.enqueued.inc({ channel: sub.channel, result: "queued" });
  return "queued";
}

function matchesReport(data: Record<string, unknown>): { newMatches: number; latestDeliveredAt: string } {
  const { newMatches, latestDeliveredAt } = data;
  if (!Number.isSafeInteger(newMatches) || (newMatches as number) < 1) {
    throw new DeliveryError("ERR_DELIVERY_INVALID_EVENT", "newMatches must be a positive integer");
  }
  if (typeof latestDeliveredAt !== "string" || Number.isNaN(Date.parse(latestDeliveredAt))) {
    throw new DeliveryError("ERR_DELIVERY_INVALID_EVENT", "latestDeliveredAt must be a date-time");
  }
  return { newMatches: newMatches as number, latestDeliveredAt };
}
