import { sql } from "@doorbell/store";
import {
  followsMcpRules,
  mcpEnvelope,
  mcpStandardEnvelope,
  pushEnvelope,
  standardWebhookId,
} from "./channels.js";
import { MATCHES_EVENT, mergeMatches } from "./coalesce.js";
import type { Db, EngineContext } from "./context.js";
import { DeliveryError } from "./errors.js";
import { randomId } from "./ids.js";
import { appendRowsPostgres } from "./postgres-enqueue.js";
import type { Channel } from "./schema.js";
import { notifyWorkers } from "./subscriptions.js";
import { enqueueTargets, forgetTargets, MAX_SUBSCRIPTIONS_PER_STATEMENT, type Target } from "./targets.js";

export interface DeliveryEvent {
  type: string;
  data: Record<string, unknown>;
  /** When it happened (ISO 8601); now by default. */
  timestamp?: string;
  /** MCP channel: the event's id, which receivers deduplicate by. */
  eventId?: string;
  /** MCP channel: the safe-to-persist watermark delivered with the event. */
  cursor?: string;
  /**
   * MCP channels: send the signed error envelope instead of an event (the sketch's `{id, error}`,
   * SEP-3415's `{type: "terminated", error}`).
   */
  error?: { code: number; message: string; data?: Record<string, unknown> };
  /** `mcp-standard` only: SEP-3415's `{type: "gap", cursor}` envelope instead of an event. */
  gap?: { cursor: string | null };
}

/** One event for one subscription, for `enqueueMany`. */
export interface EnqueueItem {
  subscriptionId: string;
  event: DeliveryEvent;
}

/** queued: a new row; coalesced: added to a waiting matches doorbell; dropped: the subscription ended. */
export type EnqueueResult = "queued" | "coalesced" | "dropped";

const MAX_BODY_BYTES = 256 * 1024;
/** Rows per insert statement: 10 values a row stays far below SQLite's 32 766 variables. */
const MAX_ROWS_PER_INSERT = 1_000;

/**
 * Queues one event for one subscription inside the caller's transaction, so the domain change and
 * its doorbell commit or roll back together. Order of enqueue is order of delivery.
 */
export async function enqueue(
  ctx: EngineContext,
  db: Db,
  subscriptionId: string,
  event: DeliveryEvent,
): Promise<EnqueueResult> {
  const [result] = await enqueueMany(ctx, db, [{ subscriptionId, event }]);
  return result as EnqueueResult;
}

interface PendingRow {
  item: number;
  subscriptionId: string;
  webhookId: string;
  type: string;
  body: string;
}

/**
 * Queues many events, for one or many subscriptions, inside the caller's transaction: the same
 * result as calling `enqueue` for each in order (per subscription, order of the items is order of
 * delivery), with a handful of statements instead of three per event. Every event is checked
 * before anything is written; a bad one throws and writes nothing.
 */
export async function enqueueMany(
  ctx: EngineContext,
  db: Db,
  items: readonly EnqueueItem[],
): Promise<EnqueueResult[]> {
  if (items.length === 0) return [];
  const now = ctx.clock();
  const ids = [...new Set(items.map((item) => item.subscriptionId))];
  const targets = await enqueueTargets(ctx, db, ids, items);

  // Check and build everything first: nothing is written when one event is refused.
  const results: EnqueueResult[] = new Array(items.length);
  const rows: PendingRow[] = [];
  const matches = new Map<string, { count: number; latest: string | null; before: number }>();
  const defaultTimestamp = new Date(now).toISOString();
  items.forEach(({ subscriptionId, event }, item) => {
    const sub = targets.get(subscriptionId) as Target;
    if (sub.status === "ended") {
      results[item] = "dropped";
      return;
    }
    const timestamp = event.timestamp ?? defaultTimestamp;
    if (sub.channel === "push" && event.type === MATCHES_EVENT && ctx.coalesce) {
      const report = matchesReport(event.data);
      const waiting = matches.get(subscriptionId) ?? {
        count: sub.agg_new_matches,
        latest: sub.agg_latest_delivered_at,
        before: sub.agg_new_matches,
      };
      results[item] = waiting.count > 0 ? "coalesced" : "queued";
      matches.set(subscriptionId, { ...mergeMatches(waiting, report), before: waiting.before });
      return;
    }
    let webhookId: string;
    let body: string;
    if (followsMcpRules(sub.channel)) {
      if (!event.eventId || !/^[\x21-\x7e]{1,256}$/.test(event.eventId)) {
        throw new DeliveryError(
          "ERR_DELIVERY_INVALID_EVENT",
          "an MCP event needs an eventId of 1–256 printable ASCII characters",
        );
      }
      const delivery = { ...event, eventId: event.eventId, timestamp };
      if (sub.channel === "mcp-standard") {
        webhookId = standardWebhookId(event.eventId);
        body = mcpStandardEnvelope(delivery);
      } else {
        if (event.gap !== undefined) {
          throw new DeliveryError(
            "ERR_DELIVERY_INVALID_EVENT",
            "a gap envelope exists only on the mcp-standard channel (the sketch reports CursorExpired)",
          );
        }
        webhookId = event.eventId;
        body = mcpEnvelope(sub.subscriber_id, delivery);
      }
    } else {
      webhookId = randomId("msg_");
      body = pushEnvelope(event.type, timestamp, event.data);
    }
    // A UTF-8 byte is at most 3 per UTF-16 unit: only a long body needs counting.
    if (body.length * 3 > MAX_BODY_BYTES && Buffer.byteLength(body) > MAX_BODY_BYTES) {
      throw new DeliveryError(
        "ERR_DELIVERY_INVALID_EVENT",
        `an event body is at most ${MAX_BODY_BYTES} bytes`,
      );
    }
    results[item] = "queued";
    rows.push({ item, subscriptionId, webhookId, type: event.type, body });
  });

  // Matches reports only add to the waiting aggregate (push profile §6 rule 6): one update each.
  for (const [id, merged] of matches) {
    await db
      .updateTable("delivery_subscriptions")
      .set((eb) => ({
        agg_new_matches: merged.count,
        agg_latest_delivered_at: merged.latest,
        agg_first_at: eb.fn.coalesce("agg_first_at", eb.val(now)),
        wake_at: now,
        updated_at: now,
      }))
      .where("id", "=", id)
      .execute();
  }
  if (rows.length > 0) {
    if (ctx.store.dialect === "postgres") {
      const { ended, unknown } = await appendRowsPostgres(ctx, db, rows, now);
      if (unknown.length > 0) {
        // Remembered, but gone since (purged): the statement wrote nothing.
        forgetTargets(ctx, unknown);
        throw new DeliveryError("ERR_DELIVERY_UNKNOWN_SUBSCRIPTION", "no such subscription");
      }
      for (const row of rows) if (ended.has(row.subscriptionId)) results[row.item] = "dropped";
    } else {
      await insertRows(ctx, db, rows, results, now);
    }
  }

  if (rows.length > 0 || matches.size > 0) await notifyWorkers(ctx, db);
  // One increment per kind of result rather than per event: labelling costs more than counting.
  const counted = new Map<string, { channel: Channel; result: EnqueueResult; n: number }>();
  items.forEach(({ subscriptionId }, item) => {
    const channel = (targets.get(subscriptionId) as Target).channel;
    const result = results[item] as EnqueueResult;
    const key = `${channel} ${result}`;
    const entry = counted.get(key);
    if (entry) entry.n += 1;
    else counted.set(key, { channel, result, n: 1 });
  });
  for (const { channel, result, n } of counted.values()) ctx.metrics.enqueued.inc({ channel, result }, n);
  return results;
}

/**
 * Appends rows at the tails of their subscriptions' queues: one update takes a block of sequence
 * numbers per subscription under its row lock (and makes it due), one insert writes the rows.
 * A subscription that ended before its row lock was taken gets nothing (its rows are "dropped").
 * SQLite; PostgreSQL does the same in one statement (postgres-enqueue.ts).
 */
async function insertRows(
  ctx: EngineContext,
  db: Db,
  rows: PendingRow[],
  results: EnqueueResult[],
  now: number,
): Promise<void> {
  const counts = new Map<string, number>();
  for (const row of rows) counts.set(row.subscriptionId, (counts.get(row.subscriptionId) ?? 0) + 1);
  const next = new Map<string, number>();
  for (const chunk of chunks([...counts], MAX_SUBSCRIPTIONS_PER_STATEMENT)) {
    const increment = sql.join(
      chunk.map(([id, count]) => sql`when ${id} then cast(${count} as bigint)`),
      sql` `,
    );
    const taken = await sql<{ id: string; next_seq: number; status: string }>`
      update delivery_subscriptions
      set next_seq = next_seq + case id ${increment} end,
          wake_at = case when wake_at is null or wake_at > ${now} then ${now} else wake_at end,
          updated_at = ${now}
      where id in (${sql.join(chunk.map(([id]) => id))})
      returning id, next_seq, status`.execute(db);
    for (const row of taken.rows) {
      const count = counts.get(row.id) as number;
      // The block is [next_seq - count, next_seq); an ended subscription queues nothing more.
      if (row.status !== "ended") next.set(row.id, Number(row.next_seq) - count);
    }
  }
  const values: unknown[][] = [];
  for (const row of rows) {
    const seq = next.get(row.subscriptionId);
    if (seq === undefined) {
      results[row.item] = "dropped";
      continue;
    }
    next.set(row.subscriptionId, seq + 1);
    // In the column order of `INSERT_COLUMNS`.
    values.push([row.subscriptionId, seq, row.webhookId, row.type, row.body, 0, null, now, 0, now]);
  }
  // In queue order: each subscription's rows go into the table next to each other, so one head
  // read touches a page or two instead of one page per row, and the index is filled in order.
  values.sort((a, b) =>
    a[0] === b[0] ? (a[1] as number) - (b[1] as number) : (a[0] as string) < (b[0] as string) ? -1 : 1,
  );
  for (const chunk of chunks(values, MAX_ROWS_PER_INSERT)) {
    await db.executeQuery({ ...insertQuery(ctx, chunk.length), parameters: chunk.flat() });
  }
}

const INSERT_COLUMNS = [
  "subscription_id",
  "seq",
  "webhook_id",
  "type",
  "body",
  "attempts",
  "first_attempt_at",
  "next_attempt_at",
  "final",
  "created_at",
] as const;

/** Insert statements by row count, compiled once: building a 100-row insert costs more than running it. */
const insertQueries = new WeakMap<EngineContext, Map<number, ReturnType<typeof compileInsert>>>();
const INSERT_QUERY_CACHE_SIZE = 32;

function compileInsert(ctx: EngineContext, count: number) {
  const row = Object.fromEntries(INSERT_COLUMNS.map((column) => [column, 0])) as Record<
    (typeof INSERT_COLUMNS)[number],
    never
  >;
  const compiled = ctx.store.db
    .insertInto("delivery_outbox")
    .values(Array.from({ length: count }, () => row))
    .compile();
  // Every value is a parameter, row after row in the columns' order: the layout `insertRows` fills.
  if (compiled.parameters.length !== count * INSERT_COLUMNS.length) {
    throw new DeliveryError(
      "ERR_DELIVERY_CONFIG",
      "the outbox insert did not compile to one parameter per value",
    );
  }
  return compiled;
}

function insertQuery(ctx: EngineContext, count: number) {
  let cache = insertQueries.get(ctx);
  if (!cache) {
    cache = new Map();
    insertQueries.set(ctx, cache);
  }
  let compiled = cache.get(count);
  if (compiled) {
    cache.delete(count);
  } else {
    compiled = compileInsert(ctx, count);
    if (cache.size >= INSERT_QUERY_CACHE_SIZE) cache.delete(cache.keys().next().value as number);
  }
  cache.set(count, compiled);
  return compiled;
}

function chunks<T>(values: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < values.length; i += size) out.push(values.slice(i, i + size));
  return out;
}

function matchesReport(data: Record<string, unknown>): { newMatches: number; latestDeliveredAt: string } {
  const { newMatches, latestDeliveredAt } = data;
  if (!Number.isSafeInteger(newMatches) || (newMatches as number) < 1) {
    throw new DeliveryError("ERR_DELIVERY_INVALID_EVENT", "newMatches must be a positive integer");
  }
  if (typeof latestDeliveredAt !== "string" || Number.isNaN(Date.parse(latestDeliveredAt))) {
    throw new DeliveryError("ERR_DELIVERY_INVALID_EVENT", "latestDeliveredAt must be a date-time");
  }
  return { newMatches: newMatches as number, latestDeliveredAt };
}
