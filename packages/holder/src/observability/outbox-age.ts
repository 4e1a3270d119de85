/**
 * The age of the oldest doorbell still waiting (issue #17): from when it was queued, so a doorbell
 * waiting hours for its next retry counts as old. The delivery engine's own gauge says how late
 * the oldest *due* attempt is; this one says how long the oldest undelivered doorbell has waited.
 */
import type { DeliveryTables } from "@doorbell/delivery";
import type { Kysely } from "@doorbell/store";

export async function oldestPendingAgeMs(db: Kysely<DeliveryTables>, now: number): Promise<number> {
  const row = await db
    .selectFrom("delivery_outbox as o")
    .leftJoin("delivery_progress as p", "p.subscription_id", "o.subscription_id")
    .where((eb) => eb.or([eb("p.delivered_seq", "is", null), eb("o.seq", ">", eb.ref("p.delivered_seq"))]))
    .select((eb) => eb.fn.min<number>("o.created_at").as("oldest"))
    .executeTakeFirst();
  const oldest = row?.oldest === null || row?.oldest === undefined ? now : Number(row.oldest);
  return Math.max(0, now - oldest);
}
