import { defineMigrations, type Generated, sql } from "@doorbell/store";

/** Where a subscription stands. `ended` is final; its secret and endpoint are purged later. */
export type SubscriptionStatus = "pending_verification" | "awaiting_approval" | "active" | "ended";

/**
 * Which wire profile a subscription speaks: `push` is the Isto push profile (Standard Webhooks
 * headers, a strict queue, 410 ends the subscription); `mcp` is the MCP Events sketch (X-MCP-*
 * headers, each event retried on its own, 410 drops one event, sustained failures suspend delivery
 * until the client refreshes); `mcp-standard` follows every `mcp` rule but speaks SEP-3415 on the
 * wire (Standard Webhooks headers with `webhook-id` = eventId plus `X-MCP-Subscription-Id`,
 * SEP-3415 bodies). `operator` is the operator's own webhook for operational events
 * (operator-events.ts): Standard Webhooks headers, each event retried on its own, never disabled.
 * What each rule is per channel: policy.ts.
 */
export type Channel = "push" | "mcp" | "mcp-standard" | "operator";

export interface SubscriptionRow {
  id: string;
  channel: Channel;
  /** The id the receiver knows: the push subscriptionId, or the MCP client's subscription id. */
  subscriber_id: string;
  /** The endpoint, sealed like the secret (forwarding §7 rule 2 asks it encrypted at rest). */
  url_sealed: string | null;
  secret_sealed: string | null;
  /** The secret before the last rotation; signatures carry both until `previous_secret_until`. */
  previous_secret_sealed: string | null;
  previous_secret_until: number | null;
  /** A new secret waiting for its challenge (push profile §4.1: replaces the old one only then). */
  pending_secret_sealed: string | null;
  status: SubscriptionStatus;
  ended_reason: string | null;
  ended_at: number | null;
  verified: number;
  approved: number;
  verify_attempts: number;
  verify_due_at: number | null;
  expires_at: number;
  refresh_before: number;
  /** deliveryStatus of the MCP Events sketch. */
  delivery_active: number;
  last_delivery_at: number | null;
  last_error: string | null;
  failed_since: number | null;
  /** Failed attempts since the last success: with failed_since, what suspends an MCP channel (policy.ts). */
  consecutive_failures: number;
  /**
   * Endpoint health (health.ts): attempts counted in fixed windows of `HEALTH_WINDOW_MS`, the
   * current one starting at `health_window_start` and the one before it. Failures are counted by
   * the write each failure already makes, successes by the release that already writes
   * lastDeliveryAt: no statement of their own.
   */
  health_window_start: number | null;
  health_successes: number;
  health_failures: number;
  health_prev_successes: number;
  health_prev_failures: number;
  last_failure_at: number | null;
  /** When the endpoint was disabled for failing too long (push: ended; MCP channels: suspended). */
  disabled_at: number | null;
  /** Why: `failing-too-long`, or `retries-exhausted` (push profile §6 rule 5). */
  disabled_reason: string | null;
  next_seq: number;
  /** Coalescing (push profile §6 rule 6): matches waiting for the window to open. */
  agg_new_matches: number;
  agg_latest_delivered_at: string | null;
  agg_first_at: number | null;
  matches_last_sent_at: number | null;
  matches_day_start: number | null;
  matches_day_count: number;
  /** When a worker should next look at this subscription; null when nothing is due. */
  wake_at: number | null;
  lease_owner: string | null;
  lease_until: number | null;
  created_at: number;
  updated_at: number;
  purge_at: number | null;
}

export interface OutboxRow {
  id: Generated<number>;
  subscription_id: string;
  /**
   * Position in the subscription's queue: push delivers strictly in this order; the MCP channels
   * send due rows in this order, each retried on its own (policy.ts).
   */
  seq: number;
  webhook_id: string;
  type: string;
  /** The exact JSON body, fixed at enqueue so every retry sends the same bytes. */
  body: string;
  attempts: number;
  first_attempt_at: number | null;
  next_attempt_at: number;
  /** `subscription.ended`: sent once after the end, never retried. */
  final: number;
  created_at: number;
}

/**
 * How far a subscription's queue has been delivered: every outbox row with `seq <= delivered_seq`
 * was delivered (or dropped) and is skipped; such rows are deleted in bulk when the subscription
 * is released. Written on SQLite for the channels that keep a queue only: where each event is
 * retried on its own, an older row may still wait, so a delivered row is deleted instead. Recording a delivery writes this one small row instead of deleting an outbox row
 * (which touches the table and its index pages): a commit writes a page or two.
 */
export interface ProgressRow {
  subscription_id: string;
  delivered_seq: number;
}

/**
 * The operator's delivery log: failed attempts and challenges, a few per subscription.
 * Successes are not written one by one (they would cost the hot path a write each); the
 * subscription's `last_delivery_at` says when the last one was.
 */
export interface AttemptLogRow {
  id: Generated<number>;
  subscription_id: string;
  /** challenge, event, or final (`subscription.ended`). */
  kind: string;
  /** The doorbell's event type, or `subscription.verification` for a challenge. */
  type: string;
  webhook_id: string | null;
  /** 1 for the first attempt of that doorbell or challenge. */
  attempt: number;
  /** The failure category (egress outcome: http_5xx, timeout, …) or `wrong_answer`. */
  category: string;
  http_status: number | null;
  at: number;
}

/** A doorbell given up on (retries exhausted, 413, 410): kept, with its exact body, for a replay. */
export interface DeadLetterRow {
  id: string;
  subscription_id: string;
  webhook_id: string;
  type: string;
  body: string;
  attempts: number;
  first_attempt_at: number | null;
  last_attempt_at: number;
  category: string;
  /** retries-exhausted, too-large or gone. */
  reason: string;
  created_at: number;
  replayed_at: number | null;
}

/**
 * What delivery did in one 5-minute bucket on one channel, for the operator's chart: counted in
 * memory by each process and added here every few seconds (stats.ts), so a success costs the
 * hot path no write of its own. Several processes add into the same row.
 */
export interface DeliveryStatsRow {
  /** The bucket's start, epoch milliseconds, a multiple of 5 minutes. */
  bucket_start: number;
  channel: Channel;
  successes: number;
  failures: number;
  /** Attempt time in ms, summed and the longest, over successes and failures. */
  latency_ms_sum: number;
  latency_ms_max: number;
  /** Attempts answered within 100 ms, 1 s and 5 s (cumulative, like Prometheus buckets). */
  within_100ms: number;
  within_1s: number;
  within_5s: number;
}

export interface DeliveryTables {
  delivery_subscriptions: SubscriptionRow;
  delivery_outbox: OutboxRow;
  delivery_progress: ProgressRow;
  delivery_attempt_log: AttemptLogRow;
  delivery_dead_letters: DeadLetterRow;
  delivery_stats: DeliveryStatsRow;
}

export const deliveryMigrations = defineMigrations("delivery", [
  {
    version: 1,
    name: "subscriptions_and_outbox",
    async up(db, { types, autoId }) {
      await db.schema
        .createTable("delivery_subscriptions")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("channel", "text", (c) => c.notNull())
        .addColumn("subscriber_id", "text", (c) => c.notNull())
        .addColumn("url_sealed", "text")
        .addColumn("secret_sealed", "text")
        .addColumn("previous_secret_sealed", "text")
        .addColumn("previous_secret_until", types.timestamp)
        .addColumn("pending_secret_sealed", "text")
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("ended_reason", "text")
        .addColumn("ended_at", types.timestamp)
        .addColumn("verified", types.boolean, (c) => c.notNull().defaultTo(0))
        .addColumn("approved", types.boolean, (c) => c.notNull().defaultTo(0))
        .addColumn("verify_attempts", types.integer, (c) => c.notNull().defaultTo(0))
        .addColumn("verify_due_at", types.timestamp)
        .addColumn("expires_at", types.timestamp, (c) => c.notNull())
        .addColumn("refresh_before", types.timestamp, (c) => c.notNull())
        .addColumn("delivery_active", types.boolean, (c) => c.notNull().defaultTo(1))
        .addColumn("last_delivery_at", types.timestamp)
        .addColumn("last_error", "text")
        .addColumn("failed_since", types.timestamp)
        .addColumn("next_seq", types.bigint, (c) => c.notNull().defaultTo(1))
        .addColumn("agg_new_matches", types.integer, (c) => c.notNull().defaultTo(0))
        .addColumn("agg_latest_delivered_at", "text")
        .addColumn("agg_first_at", types.timestamp)
        .addColumn("matches_last_sent_at", types.timestamp)
        .addColumn("matches_day_start", types.timestamp)
        .addColumn("matches_day_count", types.integer, (c) => c.notNull().defaultTo(0))
        .addColumn("wake_at", types.timestamp)
        .addColumn("lease_owner", "text")
        .addColumn("lease_until", types.timestamp)
        .addColumn("created_at", types.timestamp, (c) => c.notNull())
        .addColumn("updated_at", types.timestamp, (c) => c.notNull())
        .addColumn("purge_at", types.timestamp)
        .execute();
      await db.schema
        .createIndex("delivery_subscriptions_wake")
        .on("delivery_subscriptions")
        .column("wake_at")
        .execute();
      await db.schema
        .createTable("delivery_outbox")
        .$call(autoId("id"))
        .addColumn("subscription_id", "text", (c) =>
          c.notNull().references("delivery_subscriptions.id").onDelete("cascade"),
        )
        .addColumn("seq", types.bigint, (c) => c.notNull())
        .addColumn("webhook_id", "text", (c) => c.notNull())
        .addColumn("type", "text", (c) => c.notNull())
        .addColumn("body", "text", (c) => c.notNull())
        .addColumn("attempts", types.integer, (c) => c.notNull().defaultTo(0))
        .addColumn("first_attempt_at", types.timestamp)
        .addColumn("next_attempt_at", types.timestamp, (c) => c.notNull())
        .addColumn("final", types.boolean, (c) => c.notNull().defaultTo(0))
        .addColumn("created_at", types.timestamp, (c) => c.notNull())
        .addUniqueConstraint("delivery_outbox_order", ["subscription_id", "seq"])
        .execute();
    },
  },
  {
    version: 2,
    name: "delivery_progress",
    async up(db, { types }) {
      await db.schema
        .createTable("delivery_progress")
        .addColumn("subscription_id", "text", (c) =>
          c.primaryKey().references("delivery_subscriptions.id").onDelete("cascade"),
        )
        .addColumn("delivered_seq", types.bigint, (c) => c.notNull())
        .execute();
    },
  },
  {
    version: 3,
    name: "delivery_log",
    async up(db, { types, autoId }) {
      // Both cascade: when an ended subscription is purged (push profile §6 rule 7), its log goes too.
      await db.schema
        .createTable("delivery_attempt_log")
        .$call(autoId("id"))
        .addColumn("subscription_id", "text", (c) =>
          c.notNull().references("delivery_subscriptions.id").onDelete("cascade"),
        )
        .addColumn("kind", "text", (c) => c.notNull())
        .addColumn("type", "text", (c) => c.notNull())
        .addColumn("webhook_id", "text")
        .addColumn("attempt", types.integer, (c) => c.notNull())
        .addColumn("category", "text", (c) => c.notNull())
        .addColumn("http_status", types.integer)
        .addColumn("at", types.timestamp, (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("delivery_attempt_log_subscription")
        .on("delivery_attempt_log")
        .columns(["subscription_id", "id"])
        .execute();
      await db.schema
        .createTable("delivery_dead_letters")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("subscription_id", "text", (c) =>
          c.notNull().references("delivery_subscriptions.id").onDelete("cascade"),
        )
        .addColumn("webhook_id", "text", (c) => c.notNull())
        .addColumn("type", "text", (c) => c.notNull())
        .addColumn("body", "text", (c) => c.notNull())
        .addColumn("attempts", types.integer, (c) => c.notNull())
        .addColumn("first_attempt_at", types.timestamp)
        .addColumn("last_attempt_at", types.timestamp, (c) => c.notNull())
        .addColumn("category", "text", (c) => c.notNull())
        .addColumn("reason", "text", (c) => c.notNull())
        .addColumn("created_at", types.timestamp, (c) => c.notNull())
        .addColumn("replayed_at", types.timestamp)
        .execute();
      await db.schema
        .createIndex("delivery_dead_letters_subscription")
        .on("delivery_dead_letters")
        .columns(["subscription_id", "created_at"])
        .execute();
    },
  },
  {
    version: 4,
    name: "outbox_matches_index",
    async up(db) {
      // Every release asks whether a matches doorbell is queued. Without this index that question
      // walked the subscription's whole backlog (1.9 ms a release at 300 queued rows).
      // The type is the push profile's coalesced event, the only one when this was written; a
      // migration never changes, so it stays named here (coalesce.ts, `queuedCoalescedType`).
      await db.schema
        .createIndex("delivery_outbox_matches")
        .on("delivery_outbox")
        .column("subscription_id")
        .where(sql.ref("type"), "=", sql.lit("intent.matches.delivered"))
        .execute();
    },
  },
  {
    version: 5,
    name: "outbox_without_subscription_key",
    async up(db, { dialect }) {
      // PostgreSQL checked the outbox's foreign key with a locking query per appended row: a sixth
      // of an enqueue's time. Every append already updates its subscription's row in the
      // same transaction and writes nothing when the row is gone, and the purge deletes that row
      // before its queue (postgres-releases.ts), so no row is ever left without its subscription.
      // SQLite checks the key in process, for next to nothing, and keeps it.
      if (dialect !== "postgres") return;
      await sql`alter table delivery_outbox drop constraint if exists delivery_outbox_subscription_id_fkey`.execute(
        db,
      );
    },
  },
  {
    version: 6,
    name: "consecutive_failures",
    async up(db, { types }) {
      // Written with each failure and cleared with lastError/failedSince: the MCP channels suspend
      // on a sustained failure rate, not on one event's exhausted retries.
      await db.schema
        .alterTable("delivery_subscriptions")
        .addColumn("consecutive_failures", types.integer, (c) => c.notNull().defaultTo(0))
        .execute();
    },
  },
  {
    version: 7,
    name: "endpoint_health",
    async up(db, { types }) {
      // Counted by writes the delivery paths already make (health.ts); null/0 for old rows.
      const columns: Array<[string, "timestamp" | "count" | "text"]> = [
        ["health_window_start", "timestamp"],
        ["health_successes", "count"],
        ["health_failures", "count"],
        ["health_prev_successes", "count"],
        ["health_prev_failures", "count"],
        ["last_failure_at", "timestamp"],
        ["disabled_at", "timestamp"],
        ["disabled_reason", "text"],
      ];
      for (const [name, kind] of columns) {
        await db.schema
          .alterTable("delivery_subscriptions")
          .addColumn(
            name,
            kind === "text" ? "text" : kind === "timestamp" ? types.timestamp : types.integer,
            (c) => (kind === "count" ? c.notNull().defaultTo(0) : c),
          )
          .execute();
      }
    },
  },
  {
    version: 8,
    name: "delivery_stats",
    async up(db, { types }) {
      // Keyed by bucket first: the chart reads a time range, the prune deletes old buckets.
      await db.schema
        .createTable("delivery_stats")
        .addColumn("bucket_start", types.timestamp, (c) => c.notNull())
        .addColumn("channel", "text", (c) => c.notNull())
        .addColumn("successes", types.bigint, (c) => c.notNull().defaultTo(0))
        .addColumn("failures", types.bigint, (c) => c.notNull().defaultTo(0))
        .addColumn("latency_ms_sum", types.bigint, (c) => c.notNull().defaultTo(0))
        .addColumn("latency_ms_max", types.bigint, (c) => c.notNull().defaultTo(0))
        .addColumn("within_100ms", types.bigint, (c) => c.notNull().defaultTo(0))
        .addColumn("within_1s", types.bigint, (c) => c.notNull().defaultTo(0))
        .addColumn("within_5s", types.bigint, (c) => c.notNull().defaultTo(0))
        .addPrimaryKeyConstraint("delivery_stats_pkey", ["bucket_start", "channel"])
        .execute();
    },
  },
  {
    version: 9,
    name: "retention_indexes",
    async up(db) {
      // The retention prune (retention.ts) deletes by age in small batches: each batch finds its
      // oldest rows through these instead of reading the whole table.
      await db.schema
        .createIndex("delivery_attempt_log_at")
        .on("delivery_attempt_log")
        .column("at")
        .execute();
      await db.schema
        .createIndex("delivery_dead_letters_created")
        .on("delivery_dead_letters")
        .column("created_at")
        .execute();
      await db.schema
        .createIndex("delivery_dead_letters_replayed")
        .on("delivery_dead_letters")
        .column("replayed_at")
        .execute();
    },
  },
]);
