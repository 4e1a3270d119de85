import type { Db, EngineContext } from "./context.js";

/** A delivery the endpoint accepted (2xx), to be recorded: its row leaves the outbox. */
export interface Delivered {
  rowId: number;
  subscriptionId: string;
  /** When the answer came. */
  at: number;
  /** A matches doorbell: also moves the coalescing window (matches_last_sent_at) at once. */
  matches: boolean;
}

interface Waiting {
  rowId: number;
  resolve(recorded: boolean): void;
  reject(error: unknown): void;
}

interface Batch {
  waiting: Waiting[];
  /** A flush is scheduled or running; later deliveries wait for the next one. */
  busy: boolean;
}

/** Bound on the ids one statement carries (SQLite allows 32 766 variables). */
const MAX_BATCH = 512;
// Taken at load time, so a test that installs fake timers later cannot stall the commits.
const defer = setImmediate;
const batches = new WeakMap<EngineContext, Batch>();

/**
 * Records a successful delivery: its row leaves the outbox. Resolves true once recorded, false when
 * the row was already gone: `end()` removed the subscription's queue while the request was in
 * flight, so nothing prefetched behind it may be sent.
 *
 * Only the row is written. deliveryStatus (lastDeliveryAt, and clearing lastError/failedSince) is
 * written once per claim when the worker releases the subscription (worker.ts, `release`): on
 * PostgreSQL every enqueue transaction holds the subscription row until it commits, and an update
 * of that row per delivery made every delivery wait for bulk enqueues. A matches doorbell is the
 * exception: it moves the coalescing window (matches_last_sent_at), which a crash must not lose,
 * so it updates the row at once, in the same transaction, as before.
 *
 * On SQLite the rows of every delivery that completes in the same event-loop turn are deleted in
 * one transaction (group commit): with `synchronous=FULL` each commit costs an fsync, which would
 * otherwise cap deliveries at one per fsync. Nothing is weakened: the caller sends nothing more
 * for that subscription until this resolves (so a crash before the commit redelivers this row,
 * with its webhook-id, before anything behind it). On PostgreSQL the delete is one statement of
 * its own; concurrent commits on pooled connections already share WAL flushes.
 */
export function recordDelivered(ctx: EngineContext, delivered: Delivered): Promise<boolean> {
  if (delivered.matches) {
    return ctx.store.transaction(async (trx) => {
      const removed = await deleteRows(trx, [delivered.rowId]);
      await trx
        .updateTable("delivery_subscriptions")
        .set({
          last_delivery_at: delivered.at,
          last_error: null,
          failed_since: null,
          matches_last_sent_at: delivered.at,
          updated_at: delivered.at,
        })
        .where("id", "=", delivered.subscriptionId)
        .execute();
      return removed.has(delivered.rowId);
    });
  }
  if (ctx.store.dialect !== "sqlite") {
    return deleteRows(ctx.store.db, [delivered.rowId]).then((removed) => removed.has(delivered.rowId));
  }
  let batch = batches.get(ctx);
  if (!batch) {
    batch = { waiting: [], busy: false };
    batches.set(ctx, batch);
  }
  const current = batch;
  return new Promise<boolean>((resolve, reject) => {
    current.waiting.push({ rowId: delivered.rowId, resolve, reject });
    if (!current.busy) {
      current.busy = true;
      defer(() => void flush(ctx, current));
    }
  });
}

async function flush(ctx: EngineContext, batch: Batch): Promise<void> {
  const taken = batch.waiting.splice(0, MAX_BATCH);
  try {
    const ids = taken.map((delivered) => delivered.rowId);
    const removed = await ctx.store.transaction((trx) => deleteRows(trx, ids));
    for (const delivered of taken) delivered.resolve(removed.has(delivered.rowId));
  } catch (error) {
    // Nothing was recorded: each caller fails as its own transaction would have, and the rows are
    // delivered again once the leases expire.
    for (const delivered of taken) delivered.reject(error);
  } finally {
    if (batch.waiting.length > 0) defer(() => void flush(ctx, batch));
    else batch.busy = false;
  }
}

/** Deletes outbox rows by id; returns the ids that were still there. */
async function deleteRows(db: Db, ids: readonly number[]): Promise<Set<number>> {
  const removed = await db.deleteFrom("delivery_outbox").where("id", "in", ids).returning("id").execute();
  return new Set(removed.map((row) => Number(row.id)));
}
