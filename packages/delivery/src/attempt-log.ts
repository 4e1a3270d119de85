/**
 * What the operator's delivery log keeps: each failed attempt or challenge, the last
 * `KEPT_ATTEMPTS` per subscription, and each doorbell given up on, with its exact body for a
 * replay. Written only on the failure path, inside the transaction that records the failure.
 */
import type { Db } from "./context.js";
import { randomId } from "./ids.js";

/** Failed attempts kept per subscription; older ones are deleted as new ones come. */
export const KEPT_ATTEMPTS = 50;

export interface FailedAttempt {
  subscriptionId: string;
  kind: "challenge" | "event" | "final";
  type: string;
  webhookId: string | null;
  attempt: number;
  category: string;
  httpStatus: number | undefined;
  at: number;
}

export async function logFailedAttempt(db: Db, entry: FailedAttempt): Promise<void> {
  await db
    .insertInto("delivery_attempt_log")
    .values({
      subscription_id: entry.subscriptionId,
      kind: entry.kind,
      type: entry.type,
      webhook_id: entry.webhookId,
      attempt: entry.attempt,
      category: entry.category,
      http_status: entry.httpStatus ?? null,
      at: entry.at,
    })
    .execute();
  const oldestKept = await db
    .selectFrom("delivery_attempt_log")
    .select("id")
    .where("subscription_id", "=", entry.subscriptionId)
    .orderBy("id", "desc")
    .offset(KEPT_ATTEMPTS - 1)
    .limit(1)
    .executeTakeFirst();
  if (oldestKept !== undefined) {
    await db
      .deleteFrom("delivery_attempt_log")
      .where("subscription_id", "=", entry.subscriptionId)
      .where("id", "<", oldestKept.id)
      .execute();
  }
}

/** Why a doorbell was given up on. */
export type DeadLetterReason = "retries-exhausted" | "too-large" | "gone";

export interface GivenUp {
  subscriptionId: string;
  row: { webhook_id: string; type: string; body: string; first_attempt_at: number | null };
  attempts: number;
  category: string;
  reason: DeadLetterReason;
  at: number;
}

export async function deadLetter(db: Db, given: GivenUp): Promise<void> {
  await db
    .insertInto("delivery_dead_letters")
    .values({
      id: randomId("dlq_"),
      subscription_id: given.subscriptionId,
      webhook_id: given.row.webhook_id,
      type: given.row.type,
      body: given.row.body,
      attempts: given.attempts,
      first_attempt_at: given.row.first_attempt_at,
      last_attempt_at: given.at,
      category: given.category,
      reason: given.reason,
      created_at: given.at,
      replayed_at: null,
    })
    .execute();
}
