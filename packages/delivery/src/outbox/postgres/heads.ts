import { sql } from "@doorbell/store";
import type { EngineContext } from "../../context.js";
import type { HeadRow } from "../backend.js";

/**
 * PostgreSQL: the head reads asked for in one event-loop turn go out as ONE statement.
 *
 * Profiling the delivery bench counted 0.35 head reads per delivered doorbell
 * while events were being enqueued: every enqueue commit wakes each leased subscription, and each
 * read its own head. Those statements cost more CPU in Node and in PostgreSQL than the deliveries
 * themselves. The workers woken by one commit ask in the same turn, so they now share one read.
 * Each caller still gets exactly the rows its own read would have returned, read after it asked.
 */

interface Request {
  id: string;
  limit: number;
  /** "each" order: only rows due at this time (see `dueRowsPostgres`); undefined: the queue's head. */
  now: number | undefined;
  resolve(rows: HeadRow[]): void;
  reject(error: unknown): void;
}

const pending = new WeakMap<EngineContext, Request[]>();
// Taken at load time, so a test that installs fake timers later cannot stall the reads.
const defer = setImmediate;

/** The next `limit` undelivered rows of the subscription's queue, in order. */
export function headRowsPostgres(ctx: EngineContext, id: string, limit: number): Promise<HeadRow[]> {
  return ask(ctx, id, limit, undefined);
}

/**
 * "each" order: the next `limit` rows due at `now`, in order, skipping rows that wait for their
 * retry, each with the oldest older row that waits (`older_waiting`), as worker.ts reads on SQLite.
 */
export function dueRowsPostgres(
  ctx: EngineContext,
  id: string,
  limit: number,
  now: number,
): Promise<HeadRow[]> {
  return ask(ctx, id, limit, now);
}

function ask(ctx: EngineContext, id: string, limit: number, now: number | undefined): Promise<HeadRow[]> {
  let batch = pending.get(ctx);
  if (!batch) {
    const requests: Request[] = [];
    batch = requests;
    pending.set(ctx, requests);
    defer(() => {
      pending.delete(ctx);
      readAll(ctx, requests).then(
        (rows) => {
          requests.forEach((request, index) => {
            request.resolve(rows[index] as HeadRow[]);
          });
        },
        (error: unknown) => {
          for (const request of requests) request.reject(error);
        },
      );
    });
  }
  return new Promise<HeadRow[]>((resolve, reject) => {
    (batch as Request[]).push({ id, limit, now, resolve, reject });
  });
}

/** Each request's rows, in the order asked: heads and due rows go in one statement each. */
async function readAll(ctx: EngineContext, requests: readonly Request[]): Promise<HeadRow[][]> {
  if (requests.every((request) => request.now === undefined)) return readHeads(ctx, requests);
  const heads = requests.filter((request) => request.now === undefined);
  const due = requests.filter((request) => request.now !== undefined);
  const [headRows, dueRows] = await Promise.all([
    heads.length > 0 ? readHeads(ctx, heads) : [],
    readDue(ctx, due),
  ]);
  const byRequest = new Map<Request, HeadRow[]>();
  for (const [index, request] of heads.entries()) byRequest.set(request, headRows[index] as HeadRow[]);
  for (const [index, request] of due.entries()) byRequest.set(request, dueRows[index] as HeadRow[]);
  return requests.map((request) => byRequest.get(request) as HeadRow[]);
}

/** One lateral index scan per request; the answer's rows grouped by request, in queue order. */
async function readHeads(ctx: EngineContext, requests: readonly Request[]): Promise<HeadRow[][]> {
  const ids = requests.map((request) => request.id);
  const limits = requests.map((request) => request.limit);
  // delivery_progress is written on SQLite only; kept here so both engines agree on what is done.
  const { rows } = await sql<HeadRow & { n: number }>`
    select r.n, o.id, o.seq, o.webhook_id, o.type, o.body, o.attempts, o.first_attempt_at,
      o.next_attempt_at, o.final
    from unnest(${ids}::text[], ${limits}::int[]) with ordinality as r(subscription_id, lim, n)
    cross join lateral (
      select * from delivery_outbox q
      where q.subscription_id = r.subscription_id
        and q.seq > coalesce(
          (select delivered_seq from delivery_progress p where p.subscription_id = r.subscription_id), 0)
      order by q.seq
      limit r.lim) o
    order by r.n, o.seq`.execute(ctx.store.db);
  const grouped: HeadRow[][] = requests.map(() => []);
  for (const { n, ...row } of rows) (grouped[Number(n) - 1] as HeadRow[]).push(row);
  return grouped;
}

/**
 * `readHeads` for "each" order: each request's due rows, with the oldest waiting row before each
 * (an index walk from the queue's start that stops at the first waiting row). The time is the
 * latest asked for: every caller asked before the statement went out.
 */
async function readDue(ctx: EngineContext, requests: readonly Request[]): Promise<HeadRow[][]> {
  const ids = requests.map((request) => request.id);
  const limits = requests.map((request) => request.limit);
  const now = Math.max(...requests.map((request) => request.now as number));
  const { rows } = await sql<HeadRow & { n: number }>`
    select r.n, o.id, o.seq, o.webhook_id, o.type, o.body, o.attempts, o.first_attempt_at,
      o.next_attempt_at, o.final,
      (select w.seq from delivery_outbox w
        where w.subscription_id = r.subscription_id and w.seq < o.seq and w.next_attempt_at > ${now}
        order by w.seq limit 1) as older_waiting
    from unnest(${ids}::text[], ${limits}::int[]) with ordinality as r(subscription_id, lim, n)
    cross join lateral (
      select * from delivery_outbox q
      where q.subscription_id = r.subscription_id
        and q.seq > coalesce(
          (select delivered_seq from delivery_progress p where p.subscription_id = r.subscription_id), 0)
        and q.next_attempt_at <= ${now}
      order by q.seq
      limit r.lim) o
    order by r.n, o.seq`.execute(ctx.store.db);
  const grouped: HeadRow[][] = requests.map(() => []);
  for (const { n, ...row } of rows) (grouped[Number(n) - 1] as HeadRow[]).push(row);
  return grouped;
}
