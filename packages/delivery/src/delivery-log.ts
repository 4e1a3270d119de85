/**
 * The operator's delivery log (like Svix's and Hook0's message logs): per subscription
 * its status, the next attempt, what is queued, the recent failed attempts with their category
 * and time, and the doorbells given up on. Read straight from the tables, so `doorbell
 * deliveries` works beside a running holder. Never a secret or an endpoint: nothing beyond what
 * the doorbells themselves carry.
 */
import type { Kysely } from "@doorbell/store";
import { KEPT_ATTEMPTS } from "./attempt-log.js";
import { DeliveryError } from "./errors.js";
import { type EndpointHealth, endpointHealth, HEALTH_COLUMNS } from "./health.js";
import type { Channel, DeliveryTables, SubscriptionStatus } from "./schema.js";

export interface DeliveryLogEntry {
  id: string;
  channel: Channel;
  /** The id the receiver knows (it is in every doorbell). */
  subscriberId: string;
  status: SubscriptionStatus;
  endedReason: string | null;
  /** MCP channels: false while delivery is suspended after exhausted retries. */
  deliveryActive: boolean;
  lastDeliveryAt: number | null;
  lastError: string | null;
  failedSince: number | null;
  /** When the worker next looks at it (an attempt, a challenge, the window, the lease end). */
  nextAttemptAt: number | null;
  queued: number;
  deadLetters: number;
  createdAt: number;
  expiresAt: number;
  /**
   * How its endpoint has been answering (health.ts): attempts by result over the last one to two
   * days, the last error's category, the time since the last success, and whether and when it was
   * disabled for failing too long.
   */
  health: EndpointHealth;
}

export interface LoggedAttempt {
  kind: string;
  type: string;
  webhookId: string | null;
  attempt: number;
  category: string;
  httpStatus: number | null;
  at: number;
}

export interface QueuedDoorbell {
  webhookId: string;
  type: string;
  attempts: number;
  nextAttemptAt: number;
  createdAt: number;
}

export interface DeadLetter {
  id: string;
  webhookId: string;
  type: string;
  attempts: number;
  firstAttemptAt: number | null;
  lastAttemptAt: number;
  category: string;
  reason: string;
  replayedAt: number | null;
  /** The exact body that was sent: the doorbell itself. */
  body: string;
}

export interface SubscriptionLog extends DeliveryLogEntry {
  attempts: LoggedAttempt[];
  queue: QueuedDoorbell[];
  deadLetterList: DeadLetter[];
}

export interface DeliveryLogFilter {
  status?: SubscriptionStatus;
  /** Only subscriptions with a doorbell given up on and not replayed yet. */
  withDeadLetters?: boolean;
  /** Only these channels. */
  channels?: readonly Channel[];
  /** Only endpoints disabled for failing too long (and not recovered since). */
  disabled?: boolean;
  limit?: number;
  /** The time health is read at (default now). */
  now?: number;
}

type Db = Kysely<DeliveryTables>;

/** Subscriptions, the most recently changed first. */
export async function listDeliveries(db: Db, filter: DeliveryLogFilter = {}): Promise<DeliveryLogEntry[]> {
  return entries(db, filter);
}

async function entries(db: Db, filter: DeliveryLogFilter & { id?: string }): Promise<DeliveryLogEntry[]> {
  let query = db
    .selectFrom("delivery_subscriptions as s")
    .select((eb) => [
      "s.id",
      "s.channel",
      "s.subscriber_id",
      "s.status",
      "s.ended_reason",
      "s.delivery_active",
      "s.last_delivery_at",
      "s.last_error",
      "s.failed_since",
      "s.wake_at",
      "s.created_at",
      "s.expires_at",
      ...HEALTH_COLUMNS.map((column) => `s.${column}` as const),
      eb
        .selectFrom("delivery_outbox as o")
        .select((inner) => inner.fn.countAll<number>().as("n"))
        .whereRef("o.subscription_id", "=", "s.id")
        .where((inner) =>
          inner(
            "o.seq",
            ">",
            inner.fn.coalesce(
              inner
                .selectFrom("delivery_progress as p")
                .select("p.delivered_seq")
                .whereRef("p.subscription_id", "=", "s.id"),
              inner.lit(0),
            ),
          ),
        )
        .as("queued"),
      eb
        .selectFrom("delivery_dead_letters as d")
        .select((inner) => inner.fn.countAll<number>().as("n"))
        .whereRef("d.subscription_id", "=", "s.id")
        .where("d.replayed_at", "is", null)
        .as("dead"),
    ])
    .orderBy("s.updated_at", "desc")
    .orderBy("s.id")
    .limit(filter.limit ?? 100);
  if (filter.id !== undefined) query = query.where("s.id", "=", filter.id);
  if (filter.status !== undefined) query = query.where("s.status", "=", filter.status);
  if (filter.channels !== undefined) query = query.where("s.channel", "in", [...filter.channels]);
  if (filter.disabled) query = query.where("s.disabled_at", "is not", null);
  if (filter.withDeadLetters) {
    query = query.where((eb) =>
      eb.exists(
        eb
          .selectFrom("delivery_dead_letters as d")
          .select("d.id")
          .whereRef("d.subscription_id", "=", "s.id")
          .where("d.replayed_at", "is", null),
      ),
    );
  }
  const rows = await query.execute();
  const now = filter.now ?? Date.now();
  return rows.map((row) => ({
    id: row.id,
    channel: row.channel,
    subscriberId: row.subscriber_id,
    status: row.status,
    endedReason: row.ended_reason,
    deliveryActive: Number(row.delivery_active) === 1,
    lastDeliveryAt: numberOrNull(row.last_delivery_at),
    lastError: row.last_error,
    failedSince: numberOrNull(row.failed_since),
    nextAttemptAt: numberOrNull(row.wake_at),
    queued: Number(row.queued ?? 0),
    deadLetters: Number(row.dead ?? 0),
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
    health: endpointHealth(row, now),
  }));
}

/** One subscription's log: its state, queue, recent failed attempts and dead letters. */
export async function showDelivery(
  db: Db,
  id: string,
  recent = 20,
  now = Date.now(),
): Promise<SubscriptionLog> {
  const found = await db
    .selectFrom("delivery_subscriptions")
    .select(["id", "updated_at"])
    .where((eb) => eb.or([eb("id", "=", id), eb("subscriber_id", "=", id)]))
    .orderBy("updated_at", "desc")
    .limit(1)
    .executeTakeFirst();
  if (found === undefined)
    throw new DeliveryError("ERR_DELIVERY_UNKNOWN_SUBSCRIPTION", "no such subscription");
  const [entry] = await entries(db, { id: found.id, limit: 1, now });
  if (entry === undefined)
    throw new DeliveryError("ERR_DELIVERY_UNKNOWN_SUBSCRIPTION", "no such subscription");
  const attempts = await db
    .selectFrom("delivery_attempt_log")
    .select(["kind", "type", "webhook_id", "attempt", "category", "http_status", "at"])
    .where("subscription_id", "=", found.id)
    .orderBy("id", "desc")
    .limit(Math.min(recent, KEPT_ATTEMPTS))
    .execute();
  const progress = await db
    .selectFrom("delivery_progress")
    .select("delivered_seq")
    .where("subscription_id", "=", found.id)
    .executeTakeFirst();
  const queue = await db
    .selectFrom("delivery_outbox")
    .select(["webhook_id", "type", "attempts", "next_attempt_at", "created_at"])
    .where("subscription_id", "=", found.id)
    .where("seq", ">", Number(progress?.delivered_seq ?? 0))
    .orderBy("seq")
    .limit(recent)
    .execute();
  const dead = await db
    .selectFrom("delivery_dead_letters")
    .selectAll()
    .where("subscription_id", "=", found.id)
    .orderBy("created_at", "desc")
    .orderBy("id")
    .limit(recent)
    .execute();
  return {
    ...entry,
    attempts: attempts.map((a) => ({
      kind: a.kind,
      type: a.type,
      webhookId: a.webhook_id,
      attempt: Number(a.attempt),
      category: a.category,
      httpStatus: numberOrNull(a.http_status),
      at: Number(a.at),
    })),
    queue: queue.map((q) => ({
      webhookId: q.webhook_id,
      type: q.type,
      attempts: Number(q.attempts),
      nextAttemptAt: Number(q.next_attempt_at),
      createdAt: Number(q.created_at),
    })),
    deadLetterList: dead.map((d) => ({
      id: d.id,
      webhookId: d.webhook_id,
      type: d.type,
      attempts: Number(d.attempts),
      firstAttemptAt: numberOrNull(d.first_attempt_at),
      lastAttemptAt: Number(d.last_attempt_at),
      category: d.category,
      reason: d.reason,
      replayedAt: numberOrNull(d.replayed_at),
      body: d.body,
    })),
  };
}

const numberOrNull = (value: number | string | null | undefined): number | null =>
  value === null || value === undefined ? null : Number(value);
