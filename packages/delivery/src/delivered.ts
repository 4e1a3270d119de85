import type { EngineContext } from "./context.js";
import { deleteRows } from "./outbox/rows.js";

/** A delivery the endpoint accepted (2xx), to be recorded: its row is done. */
export interface Delivered {
  rowId: number;
  /** The row's place in its subscription's queue. */
  seq: number;
  subscriptionId: string;
  /** When the answer came. */
  at: number;
  /** A matches doorbell: also moves the coalescing window (matches_last_sent_at) at once. */
  matches: boolean;
  /**
   * Deleted rather than passed by the progress marker: on a channel that retries each event on
   * its own (policy.ts), older rows may still wait for their retry, and the marker says every row
   * at or below it is done.
   */
  remove: boolean;
}

/**
 * Records a successful delivery: on SQLite the subscription's `delivery_progress` moves up to the
 * row's seq, so the row is skipped from then on and deleted in bulk when the subscription is
 * released; on PostgreSQL, for a matches doorbell and on a channel that retries each event on its
 * own, the row is deleted at once. Resolves true
 * once recorded, false when the row was already gone: `end()` removed the subscription's queue while the request was in
 * flight, so nothing prefetched behind it may be sent.
 *
 * Only the row is written. deliveryStatus (lastDeliveryAt, and clearing lastError/failedSince) is
 * written once per claim when the worker releases the subscription (worker.ts, `release`): on
 * PostgreSQL every enqueue transaction holds the subscription row until it commits, and an update
 * of that row per delivery made every delivery wait for bulk enqueues. A matches doorbell is the
 * exception: it moves the coalescing window (matches_last_sent_at), which a crash must not lose,
 * so it updates the row at once, in the same transaction, as before.
 *
 * On SQLite the deliveries that complete in the same event-loop turn are recorded in one
 * transaction (one select and one upsert of the progress rows), shared with the releases and
 * claims of that turn (group-commit.ts): with `synchronous: "full"` each commit costs an fsync,
 * which would otherwise cap deliveries at one per fsync. Nothing is weakened: the caller sends nothing more for that subscription until this
 * resolves (so a crash before the commit redelivers this row,
 * with its webhook-id, before anything behind it). On PostgreSQL the deliveries answered in the
 * same turn are deleted by one statement (group-commit.ts, `deleteSoon`).
 */
export function recordDelivered(ctx: EngineContext, delivered: Delivered): Promise<boolean> {
  if (delivered.matches) {
    return ctx.outbox.transaction(ctx, async (trx) => {
      const removed = await deleteRows(trx, [delivered.rowId]);
      await trx
        .updateTable("delivery_subscriptions")
        .set({
          last_delivery_at: delivered.at,
          last_error: null,
          failed_since: null,
          consecutive_failures: 0,
          matches_last_sent_at: delivered.at,
          updated_at: delivered.at,
        })
        .where("id", "=", delivered.subscriptionId)
        .execute();
      return removed.has(delivered.rowId);
    });
  }
  return ctx.outbox.recordDelivery(ctx, delivered);
}
