import { sql } from "@doorbell/store";
import type { HeadRow } from "./attempt.js";
import type { EngineContext } from "./context.js";

/**
 * PostgreSQL: the head reads asked for in one event-loop turn go out as ONE statement.
 *
 * Profiling the delivery bench (issue 14 item 7) counted 0.35 head reads per delivered doorbell
 * while events were being enqueued: every enqueue commit wakes each leased subscription, and each
 * read its own head. Those statements cost more CPU in Node and in PostgreSQL than the deliveries
 * themselves. The workers woken by one commit ask in the same turn, so they now share one read.
 * Each caller still gets exactly the rows its own read would have returned, read after it asked.
 */

interface Request {
  id: string;
  limit: number;
  resolve(rows: HeadRow[]): void;
  reject(error: unknown): void;
}

const pending = new WeakMap<EngineContext, Request[]>();
// Taken at load time, so a test that installs fake timers later cannot stall the reads.
const defer = setImmediate;

/** The next `limit` undelivered rows of the subscription's queue, in order. */
export function headRowsPostgres(ctx: EngineContext, id: string, limit: number): Promise<HeadRow[]> {
  let batch = pending.get(ctx);
  if (!batch) {
    const requests: Request[] = [];
    batch = requests;
    pending.set(ctx, requests);
    defer(() => {
      pending.delete(ctx);
      readHeads(ctx, requests).then(
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
    (batch as Request[]).push({ id, limit, resolve, reject });
  });
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
