/**
 * The delivery log across all subscriptions, newest first, for the operator's page: the recent
 * failed attempts and the doorbells given up on. Like delivery-log.ts, never an endpoint, a
 * secret or a body: the channel and the id the receiver knows say whose they were.
 */
import type { Db } from "./context.js";
import type { Channel } from "./schema.js";

export interface RecentAttempt {
  subscriptionId: string;
  channel: Channel;
  subscriberId: string;
  kind: string;
  type: string;
  webhookId: string | null;
  attempt: number;
  category: string;
  httpStatus: number | null;
  at: number;
}

export interface OpenDeadLetter {
  id: string;
  subscriptionId: string;
  channel: Channel;
  subscriberId: string;
  /** Whether its subscription has ended: nothing is replayed into an ended one (replay.ts). */
  subscriptionEnded: boolean;
  webhookId: string;
  type: string;
  attempts: number;
  lastAttemptAt: number;
  category: string;
  reason: string;
}

/** The last `limit` failed attempts and challenges of every subscription still stored. */
export async function recentFailedAttempts(db: Db, limit = 50): Promise<RecentAttempt[]> {
  const rows = await db
    .selectFrom("delivery_attempt_log as a")
    .innerJoin("delivery_subscriptions as s", "s.id", "a.subscription_id")
    .select([
      "a.subscription_id",
      "s.channel",
      "s.subscriber_id",
      "a.kind",
      "a.type",
      "a.webhook_id",
      "a.attempt",
      "a.category",
      "a.http_status",
      "a.at",
    ])
    .orderBy("a.id", "desc")
    .limit(limit)
    .execute();
  return rows.map((row) => ({
    subscriptionId: row.subscription_id,
    channel: row.channel,
    subscriberId: row.subscriber_id,
    kind: row.kind,
    type: row.type,
    webhookId: row.webhook_id,
    attempt: Number(row.attempt),
    category: row.category,
    httpStatus: row.http_status === null ? null : Number(row.http_status),
    at: Number(row.at),
  }));
}

/** The last `limit` dead letters not replayed yet, newest first. */
export async function openDeadLetters(db: Db, limit = 50): Promise<OpenDeadLetter[]> {
  const rows = await db
    .selectFrom("delivery_dead_letters as d")
    .innerJoin("delivery_subscriptions as s", "s.id", "d.subscription_id")
    .select([
      "d.id",
      "d.subscription_id",
      "s.channel",
      "s.subscriber_id",
      "s.status",
      "d.webhook_id",
      "d.type",
      "d.attempts",
      "d.last_attempt_at",
      "d.category",
      "d.reason",
    ])
    .where("d.replayed_at", "is", null)
    .orderBy("d.created_at", "desc")
    .orderBy("d.id")
    .limit(limit)
    .execute();
  return rows.map((row) => ({
    id: row.id,
    subscriptionId: row.subscription_id,
    channel: row.channel,
    subscriberId: row.subscriber_id,
    subscriptionEnded: row.status === "ended",
    webhookId: row.webhook_id,
    type: row.type,
    attempts: Number(row.attempts),
    lastAttemptAt: Number(row.last_attempt_at),
    category: row.category,
    reason: row.reason,
  }));
}
