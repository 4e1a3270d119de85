import { sql } from "@doorbell/store";
import { queuedCoalescedType } from "../coalesce.js";
import type { Db, EngineContext } from "../context.js";
import { failSpan, inSpan, recordEnqueued, startEnqueueSpan } from "../spans.js";

type NewRow = { webhookId: string; type: string; body: string; now: number; final: boolean };

/**
 * Appends a row at the tail of the subscription's queue; the sequence number is taken under the row
 * lock. In an enqueue span of its own when an OpenTelemetry SDK is registered (spans.ts).
 */
export async function insertRow(db: Db, subscriptionId: string, row: NewRow): Promise<void> {
  const span = startEnqueueSpan(1);
  if (span === undefined) return writeRow(db, subscriptionId, row);
  try {
    await inSpan(span, () => writeRow(db, subscriptionId, row));
    const queued = { item: 0, subscriptionId, webhookId: row.webhookId, type: row.type };
    recordEnqueued(span, [queued], [], ["queued"]);
  } catch (error) {
    failSpan(span, error);
    throw error;
  } finally {
    span.end();
  }
}

async function writeRow(db: Db, subscriptionId: string, row: NewRow): Promise<void> {
  const { seq } = await db
    .updateTable("delivery_subscriptions")
    .set((eb) => ({
      next_seq: eb("next_seq", "+", 1),
      wake_at: sql<number>`case when wake_at is null or wake_at > ${row.now} then ${row.now} else wake_at end`,
      updated_at: row.now,
    }))
    .where("id", "=", subscriptionId)
    .returning((eb) => eb("next_seq", "-", 1).as("seq"))
    .executeTakeFirstOrThrow();
  await db
    .insertInto("delivery_outbox")
    .values({
      subscription_id: subscriptionId,
      seq: Number(seq),
      webhook_id: row.webhookId,
      type: row.type,
      body: row.body,
      attempts: 0,
      first_attempt_at: null,
      next_attempt_at: row.now,
      final: row.final ? 1 : 0,
      created_at: row.now,
    })
    .execute();
}

/** Deletes outbox rows by id; returns the ids that were still there. */
export async function deleteRows(db: Db, ids: readonly number[]): Promise<Set<number>> {
  const removed = await db.deleteFrom("delivery_outbox").where("id", "in", ids).returning("id").execute();
  return new Set(removed.map((row) => Number(row.id)));
}

/**
 * The highest seq of the subscription's queue that was delivered (delivery_progress, delivered.ts):
 * rows at or below it are done and only wait for `release` to delete them.
 */
export function deliveredSeq(id: string) {
  return sql<number>`coalesce((select delivered_seq from delivery_progress where subscription_id = ${id}), 0)`;
}

/** Whether a coalesced doorbell is queued and not yet delivered. */
export async function hasQueuedMatches(
  ctx: Pick<EngineContext, "coalesced">,
  db: Db,
  id: string,
): Promise<boolean> {
  const coalesced = queuedCoalescedType(ctx.coalesced);
  if (coalesced === undefined) return false;
  const row = await db
    .selectFrom("delivery_outbox")
    .select("id")
    .where("subscription_id", "=", id)
    .where("seq", ">", deliveredSeq(id))
    .where("type", "=", coalesced)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * "each" order: what is due first is the earliest retry of the whole queue, not its head (rows
 * behind a waiting one are due at once).
 */
export async function earliestRow(
  db: Db,
  id: string,
): Promise<{ next_attempt_at: number; final: number } | undefined> {
  const row = await db
    .selectFrom("delivery_outbox")
    .select((eb) => [
      eb.fn.min<number>("next_attempt_at").as("next_attempt_at"),
      eb.fn.max<number>("final").as("final"),
    ])
    .where("subscription_id", "=", id)
    .executeTakeFirst();
  if (row?.next_attempt_at === null || row?.next_attempt_at === undefined) return undefined;
  return { next_attempt_at: Number(row.next_attempt_at), final: Number(row.final) };
}
