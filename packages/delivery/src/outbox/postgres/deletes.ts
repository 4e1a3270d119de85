import { sql } from "@doorbell/store";
import type { Db, EngineContext } from "../../context.js";

// Taken at load time, so a test that installs fake timers later cannot stall the deletes.
const defer = setImmediate;

interface PendingDelete {
  ids: number[];
  waiting: Map<number, Array<(removed: boolean) => void>>;
  failures: Array<(error: unknown) => void>;
}

const pendingDeletes = new WeakMap<EngineContext, PendingDelete>();

/**
 * PostgreSQL: the deliveries answered in the same event-loop turn are deleted by one statement
 * (one round trip, one commit) instead of one each: with 64 subscriptions in flight, a commit per
 * delivery kept every pooled connection busy waiting for WAL flushes. Each caller's promise
 * settles only after that statement committed, and it sends nothing more for its subscription
 * until then. The commit does not wait for the WAL flush (see `deleteDeliveredPostgres`).
 */
export function deleteSoon(ctx: EngineContext, rowId: number): Promise<boolean> {
  let pending = pendingDeletes.get(ctx);
  if (!pending) {
    const batch: PendingDelete = { ids: [], waiting: new Map(), failures: [] };
    pending = batch;
    pendingDeletes.set(ctx, batch);
    defer(() => {
      pendingDeletes.delete(ctx);
      deleteDeliveredPostgres(ctx.store.db, batch.ids).then(
        (removed) => {
          for (const [id, resolvers] of batch.waiting)
            for (const resolve of resolvers) resolve(removed.has(id));
        },
        (error: unknown) => {
          for (const reject of batch.failures) reject(error);
        },
      );
    });
  }
  const batch = pending;
  return new Promise<boolean>((resolve, reject) => {
    batch.ids.push(rowId);
    const resolvers = batch.waiting.get(rowId);
    if (resolvers) resolvers.push(resolve);
    else batch.waiting.set(rowId, [resolve]);
    batch.failures.push(reject);
  });
}

/**
 * Deletes delivered outbox rows by id, committed without waiting for the WAL flush
 * (synchronous_commit off for this one statement's transaction), as releases are
 * (postgres-leases.ts): under load the deletes' flushes were what the database waited on most.
 * Losing such a commit in a database crash loses no event: the rows are there again and are
 * delivered again, in order and with their webhook-ids, which at-least-once delivery already
 * allows (a worker killed after a send and before its delete does the same). Any later
 * synchronous commit (an enqueue) flushes it anyway. One text for any number of ids, so it is
 * prepared once per connection. Returns the ids that were still there.
 */
async function deleteDeliveredPostgres(db: Db, ids: readonly number[]): Promise<Set<number>> {
  const { rows } = await sql<{ id: number }>`
    with async as (select set_config('synchronous_commit', 'off', true) as setting)
    delete from delivery_outbox
    where id = any(${ids}::bigint[]) and (select setting from async) = 'off'
    returning id`.execute(db);
  return new Set(rows.map((row) => Number(row.id)));
}
