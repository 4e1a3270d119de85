import { sql } from "@doorbell/store";
import type { Db, EngineContext } from "../../context.js";
import { DeliveryError } from "../../errors.js";
import { MAX_SUBSCRIPTIONS_PER_STATEMENT } from "../../targets.js";
import type { AppendRow } from "../backend.js";

/** Rows per insert statement: 10 values a row stays far below SQLite's 32 766 variables. */
const MAX_ROWS_PER_INSERT = 1_000;

/**
 * Appends rows at the tails of their subscriptions' queues: one update takes a block of sequence
 * numbers per subscription under its row lock (and makes it due), one insert writes the rows.
 * A subscription that ended before its row lock was taken gets nothing: it is in the set returned
 * (its rows are "dropped").
 */
export async function insertRows(
  ctx: EngineContext,
  db: Db,
  rows: readonly AppendRow[],
  now: number,
): Promise<Set<string>> {
  const ended = new Set<string>();
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
      ended.add(row.subscriptionId);
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
  return ended;
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
