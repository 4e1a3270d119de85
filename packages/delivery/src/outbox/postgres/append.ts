import { sql } from "@doorbell/store";
import type { Db, EngineContext } from "../../context.js";
import { DeliveryError } from "../../errors.js";
import { MAX_SUBSCRIPTIONS_PER_STATEMENT } from "../../targets.js";
import type { AppendRow } from "../backend.js";
import { claimNotification } from "./notify.js";
import { forgetTargets } from "./targets.js";

/**
 * PostgreSQL: appends rows at the tails of their subscriptions' queues in ONE statement: the update
 * that takes a block of sequence numbers per subscription under its row lock (and makes it due),
 * the insert of the rows at those numbers, and in a transaction the workers' notification (sent at
 * commit). The enqueue path was two round trips more; every one of them is waited for while the
 * subscription rows are locked. Returns the subscriptions that had ended (their rows are not
 * written: "dropped"); throws when one does not exist, and then its statement wrote nothing.
 */
export async function appendRowsPostgres(
  ctx: EngineContext,
  db: Db,
  rows: readonly AppendRow[],
  now: number,
): Promise<Set<string>> {
  const bySubscription = new Map<string, AppendRow[]>();
  for (const row of rows) {
    const list = bySubscription.get(row.subscriptionId);
    if (list) list.push(row);
    else bySubscription.set(row.subscriptionId, [row]);
  }
  // In queue order: each subscription's rows go into the table next to each other, so one head
  // read touches a page or two instead of one page per row.
  const ids = [...bySubscription.keys()].sort();
  const ended = new Set<string>();
  const unknown: string[] = [];
  for (let first = 0; first < ids.length; first += MAX_SUBSCRIPTIONS_PER_STATEMENT) {
    const chunk = ids.slice(first, first + MAX_SUBSCRIPTIONS_PER_STATEMENT);
    const counts: number[] = [];
    const subs: string[] = [];
    const places: number[] = [];
    const webhookIds: string[] = [];
    const types: string[] = [];
    const bodies: string[] = [];
    for (const id of chunk) {
      const list = bySubscription.get(id) as AppendRow[];
      counts.push(list.length);
      list.forEach((row, place) => {
        subs.push(id);
        places.push(place);
        webhookIds.push(row.webhookId);
        types.push(row.type);
        bodies.push(row.body);
      });
    }
    const notify = claimNotification(db) ? sql`, (select pg_notify('doorbell_delivery', '')) n` : sql``;
    // `taken` returns the first number of each block; an ended subscription queues nothing more,
    // and nothing is written unless every subscription exists.
    const { rows: taken } = await sql<{ id: string; status: string }>`
      with c as (select * from unnest(${chunk}::text[], ${counts}::bigint[]) as c(id, n)),
      known as (select count(*) as n from delivery_subscriptions where id = any(${chunk}::text[])),
      taken as (
        update delivery_subscriptions s
        set next_seq = s.next_seq + c.n,
          wake_at = case when s.wake_at is null or s.wake_at > ${now}::bigint then ${now}::bigint else s.wake_at end,
          updated_at = ${now}::bigint
        from c ${notify}
        where s.id = c.id and (select n from known) = ${chunk.length}
        returning s.id, s.next_seq - c.n as first_seq, s.status),
      appended as (
        insert into delivery_outbox (subscription_id, seq, webhook_id, type, body, attempts,
          first_attempt_at, next_attempt_at, final, created_at)
        select r.subscription_id, t.first_seq + r.place, r.webhook_id, r.type, r.body, 0, null,
          ${now}::bigint, 0, ${now}::bigint
        from unnest(${subs}::text[], ${places}::bigint[], ${webhookIds}::text[], ${types}::text[],
          ${bodies}::text[]) with ordinality as r(subscription_id, place, webhook_id, type, body, k)
        join taken t on t.id = r.subscription_id
        where t.status <> 'ended'
        order by r.k)
      select id, status from taken`.execute(db);
    if (taken.length < chunk.length) {
      const found = new Set(taken.map((row) => row.id));
      unknown.push(...chunk.filter((id) => !found.has(id)));
    }
    for (const row of taken) if (row.status === "ended") ended.add(row.id);
  }
  if (unknown.length > 0) {
    // Remembered, but gone since (purged): the statement wrote nothing.
    forgetTargets(ctx, unknown);
    throw new DeliveryError("ERR_DELIVERY_UNKNOWN_SUBSCRIPTION", "no such subscription");
  }
  return ended;
}
