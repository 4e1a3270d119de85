import { sql } from "@doorbell/store";
import type { Db } from "./context.js";

/** Appends a row at the tail of the subscription's queue; the sequence number is taken under the row lock. */
export async function insertRow(
  db: Db,
  subscriptionId: string,
  row: { webhookId: string; type: string; body: string; now: number; final: boolean },
): Promise<void> {
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
