import { sql } from "@doorbell/store";
import { queuedCoalescedType } from "../../coalesce.js";
import type { EngineContext } from "../../context.js";
import { healthCountsSql } from "../../health.js";
import { eachChannels } from "../../policy.js";
import type { SubscriptionRow } from "../../schema.js";

/**
 * Claiming and releasing subscriptions on PostgreSQL, each in ONE autocommit statement that never
 * waits for a row lock.
 *
 * Every enqueue transaction holds the rows of the subscriptions it appends to (it takes their
 * sequence numbers) until it commits. A claim or release that waited for those locks held a pooled
 * connection while waiting: with 64 subscriptions in flight the pool filled with waiters and
 * deliveries stalled behind bulk enqueues (0.2× the raw loop). Now both skip a locked
 * row. A locked row means an enqueue is adding work to it, so the claim takes it on its next pass
 * and the release keeps the lease and drains again once the enqueue committed.
 */

/** Leases up to `limit` due subscriptions in one statement. */
export async function claimDuePostgres(
  ctx: EngineContext,
  workerId: string,
  limit: number,
  leaseMs: number,
): Promise<SubscriptionRow[]> {
  const now = ctx.clock();
  const { rows } = await sql<SubscriptionRow>`
    update delivery_subscriptions
    set lease_owner = ${workerId}, lease_until = ${now + leaseMs}
    where id in (
      select id from delivery_subscriptions
      where wake_at <= ${now} and (lease_until is null or lease_until <= ${now})
      order by wake_at
      limit ${limit}
      for update skip locked)
    returning *`.execute(ctx.store.db);
  return rows;
}

/** What a release needs to compute the next wake-up, read without a lock. */
export interface ReleaseView {
  sub: SubscriptionRow;
  head: { next_attempt_at: number; final: number } | undefined;
  matchesQueued: boolean;
  /** The row version read (`xmin`): the release writes its wake-up only onto that same version. */
  version: string;
}

const eachChannelLists = new WeakMap<EngineContext, string[]>();

/**
 * The release views of many subscriptions, read without a lock in one statement; by id. On a
 * channel of "each" order what is due first is the earliest retry of the whole queue, not its
 * head: the min() runs for those channels only, so a push release reads what it read before.
 */
export async function readForRelease(
  ctx: EngineContext,
  ids: readonly string[],
): Promise<Map<string, ReleaseView>> {
  let each = eachChannelLists.get(ctx);
  if (!each) {
    each = eachChannels(ctx.channels);
    eachChannelLists.set(ctx, each);
  }
  const coalesced = queuedCoalescedType(ctx.coalesced);
  const matchesQueued = coalesced
    ? sql`exists (select 1 from delivery_outbox m where m.subscription_id = s.id and m.type = ${coalesced})`
    : sql`false`;
  const { rows } = await sql<
    SubscriptionRow & {
      row_version: string;
      head_next_attempt_at: number | null;
      head_final: number | null;
      earliest_next_attempt_at: number | null;
      matches_queued: boolean;
    }
  >`
    select s.*, s.xmin::text as row_version,
      h.next_attempt_at as head_next_attempt_at, h.final as head_final,
      case when s.channel = any(${each}::text[]) then
        (select min(e.next_attempt_at) from delivery_outbox e where e.subscription_id = s.id) end
        as earliest_next_attempt_at,
      ${matchesQueued} as matches_queued
    from delivery_subscriptions s
    left join lateral (
      select next_attempt_at, final from delivery_outbox o
      where o.subscription_id = s.id order by seq limit 1) h on true
    where s.id = any(${ids}::text[])`.execute(ctx.store.db);
  const views = new Map<string, ReleaseView>();
  for (const row of rows) {
    const {
      row_version,
      head_next_attempt_at,
      head_final,
      earliest_next_attempt_at,
      matches_queued,
      ...sub
    } = row;
    const next = earliest_next_attempt_at ?? head_next_attempt_at;
    views.set(sub.id, {
      sub: sub as SubscriptionRow,
      head: next === null ? undefined : { next_attempt_at: Number(next), final: Number(head_final) },
      matchesQueued: matches_queued,
      version: row_version,
    });
  }
  return views;
}

export interface ReleaseWrite {
  id: string;
  workerId: string;
  version: string;
  wake: number | null;
  now: number;
  delivered?: { at: number; clear: boolean; count: number } | undefined;
  /** false: skip a row another transaction holds (answer "busy"); true: wait for it. */
  wait: boolean;
}

/**
 * Gives the lease back and writes the wake-up computed from `version`. If anyone changed the row
 * since (an enqueue, a renewal, an end: they all make it due), the row is made due now instead, so
 * nothing enqueued under the lease is missed. "busy": another transaction holds the row and the
 * lease is kept; "lost": the lease is no longer ours.
 */
export async function writeRelease(
  ctx: EngineContext,
  w: ReleaseWrite,
): Promise<"released" | "busy" | "lost"> {
  const delivered = w.delivered;
  // The claim's successes are counted in the same statement (health.ts).
  const counted = delivered
    ? sql`, ${healthCountsSql(sql<number>`${delivered.at}::bigint`, { successes: sql<number>`${delivered.count}::int`, failures: 0 })}`
    : sql``;
  const status = delivered
    ? delivered.clear
      ? sql`, last_delivery_at = ${delivered.at}, last_error = null, failed_since = null, consecutive_failures = 0, updated_at = ${delivered.at} ${counted}`
      : sql`, last_delivery_at = ${delivered.at} ${counted}`
    : sql``;
  const lock = w.wait
    ? sql``
    : sql`and id in (select id from delivery_subscriptions where id = ${w.id} for update skip locked)`;
  // Committed without waiting for the WAL flush (synchronous_commit off for this one statement's
  // transaction), so the row lock is given back at once instead of after an fsync: enqueues wait
  // for it. Losing a release in a database crash loses nothing: the lease runs out and the next
  // claim computes the wake-up again. Claims stay synchronous; recorded deliveries are asynchronous too
  // (group-commit.ts, `deleteDeliveredPostgres`).
  const { rows } = await sql<{ id: string }>`
    with async as (select set_config('synchronous_commit', 'off', true) as setting)
    update delivery_subscriptions
    set wake_at = case when xmin::text = ${w.version} then ${w.wake}::bigint else ${w.now}::bigint end,
      lease_owner = null, lease_until = null ${status}
    where id = ${w.id} and lease_owner = ${w.workerId} and (select setting from async) = 'off' ${lock}
    returning id`.execute(ctx.store.db);
  if (rows.length > 0) return "released";
  if (w.wait) return "lost";
  const { rows: owner } = await sql<{ lease_owner: string | null }>`
    select lease_owner from delivery_subscriptions where id = ${w.id}`.execute(ctx.store.db);
  return owner[0]?.lease_owner === w.workerId ? "busy" : "lost";
}

/**
 * `writeRelease` without waiting for row locks, for many subscriptions in one statement: the
 * releases asked for in one event-loop turn. Same rules per row; by id: "released", "busy" (an
 * enqueue holds the row, the lease is kept) or "lost".
 */
export async function writeReleases(
  ctx: EngineContext,
  writes: readonly ReleaseWrite[],
): Promise<Map<string, "released" | "busy" | "lost">> {
  const ids = writes.map((w) => w.id);
  const owners = writes.map((w) => w.workerId);
  const versions = writes.map((w) => w.version);
  const wakes = writes.map((w) => w.wake);
  const ats = writes.map((w) => w.delivered?.at ?? null);
  const clears = writes.map((w) => w.delivered?.clear === true);
  const counts = writes.map((w) => w.delivered?.count ?? 0);
  const now = writes[0]?.now ?? ctx.clock();
  // Committed without waiting for the WAL flush, as in `writeRelease`.
  const { rows } = await sql<{ id: string }>`
    with async as (select set_config('synchronous_commit', 'off', true) as setting),
    w as (
      select * from unnest(${ids}::text[], ${owners}::text[], ${versions}::text[], ${wakes}::bigint[],
        ${ats}::bigint[], ${clears}::boolean[], ${counts}::int[]) as w(id, owner, version, wake, at, clear, n))
    update delivery_subscriptions s
    set wake_at = case when s.xmin::text = w.version then w.wake else ${now}::bigint end,
      lease_owner = null, lease_until = null,
      last_delivery_at = coalesce(w.at, s.last_delivery_at),
      last_error = case when w.clear then null else s.last_error end,
      failed_since = case when w.clear then null else s.failed_since end,
      consecutive_failures = case when w.clear then 0 else s.consecutive_failures end,
      updated_at = case when w.clear then w.at else s.updated_at end,
      ${healthCountsSql(sql<number>`coalesce(w.at, ${now}::bigint)`, { successes: sql<number>`w.n`, failures: 0 })}
    from w
    where s.id = w.id and s.lease_owner = w.owner and (select setting from async) = 'off'
      and s.id in (select id from delivery_subscriptions where id = any(${ids}::text[]) for update skip locked)
    returning s.id`.execute(ctx.store.db);
  const results = new Map<string, "released" | "busy" | "lost">();
  for (const row of rows) results.set(row.id, "released");
  const left = writes.filter((w) => !results.has(w.id));
  if (left.length > 0) {
    const { rows: owned } = await sql<{ id: string; lease_owner: string | null }>`
      select id, lease_owner from delivery_subscriptions
      where id = any(${left.map((w) => w.id)}::text[])`.execute(ctx.store.db);
    const ownerOf = new Map(owned.map((row) => [row.id, row.lease_owner]));
    for (const w of left) results.set(w.id, ownerOf.get(w.id) === w.workerId ? "busy" : "lost");
  }
  return results;
}
