import { type Kysely, sql } from "@doorbell/store";
import type { DeliveryTables } from "./schema.js";

/**
 * What the packages built on the engine read of its tables, so that none of them names a table or
 * column of it: subqueries to filter their own rows by the state of the engine's subscriptions,
 * and the figures they report. Each takes the caller's connection or transaction.
 */

type Db = Kysely<DeliveryTables>;

/**
 * The subscription whose id is in the caller's column `idColumn` (e.g. "p.id"), if it has not
 * ended: a correlated subquery for `exists(…)`, looked up by key for each of the caller's rows.
 */
export function liveSubscription(db: Db, idColumn: string) {
  return storedSubscription(db, idColumn).where("d.status", "!=", "ended");
}

/** The same for a subscription still stored (ended ones are kept until their purge). */
export function storedSubscription(db: Db, idColumn: string) {
  return db
    .selectFrom("delivery_subscriptions as d")
    .select("d.id")
    .where("d.id", "=", sql.ref<string>(idColumn));
}

/** Why each of these subscriptions ended, by id; one that ended without a reason maps to null. Purged ones are absent. */
export async function endedReasons(db: Db, ids: readonly string[]): Promise<Map<string, string | null>> {
  const reasons = new Map<string, string | null>();
  for (let first = 0; first < ids.length; first += 500) {
    const rows = await db
      .selectFrom("delivery_subscriptions")
      .select(["id", "ended_reason"])
      .where("id", "in", ids.slice(first, first + 500))
      .where("status", "=", "ended")
      .execute();
    for (const row of rows) reasons.set(row.id, row.ended_reason);
  }
  return reasons;
}

/**
 * How long the oldest doorbell not yet delivered has waited, from when it was queued: one waiting
 * hours for its next retry counts as old. (The engine's own gauge says how late the oldest *due*
 * attempt is.)
 */
export async function oldestPendingAgeMs(db: Db, now: number): Promise<number> {
  const row = await db
    .selectFrom("delivery_outbox as o")
    .leftJoin("delivery_progress as p", "p.subscription_id", "o.subscription_id")
    .where((eb) => eb.or([eb("p.delivered_seq", "is", null), eb("o.seq", ">", eb.ref("p.delivered_seq"))]))
    .select((eb) => eb.fn.min<number>("o.created_at").as("oldest"))
    .executeTakeFirst();
  const oldest = row?.oldest === null || row?.oldest === undefined ? now : Number(row.oldest);
  return Math.max(0, now - oldest);
}

/** Deletes every subscription and queued doorbell: for tests that reuse one database. */
export async function clearDeliveries(db: Db): Promise<void> {
  await db.deleteFrom("delivery_outbox").execute();
  // Their progress rows go with them (on delete cascade).
  await db.deleteFrom("delivery_subscriptions").execute();
}
