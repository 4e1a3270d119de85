import { sql } from "@doorbell/store";
import type { Db } from "../../context.js";

/** The channel every process's workers listen on (engine.ts) to hear of commits elsewhere. */
export const NOTIFY_CHANNEL = "doorbell_delivery";

/** Transactions that already sent the notification: PostgreSQL delivers it once per transaction anyway. */
const notified = new WeakSet<Db>();

/**
 * For a statement that sends the notification itself inside a transaction (the enqueue's
 * sequence update): true when it still has to, and then `notify` sends nothing more.
 */
export function claimNotification(db: Db): boolean {
  if (!db.isTransaction || notified.has(db)) return false;
  notified.add(db);
  return true;
}

/** Wakes every listening process once the transaction commits (at once outside one). */
export async function notify(db: Db): Promise<void> {
  if (notified.has(db)) return;
  await sql`select pg_notify(${NOTIFY_CHANNEL}, '')`.execute(db);
  // One round trip per transaction, not per enqueued event.
  if (db.isTransaction) notified.add(db);
}
