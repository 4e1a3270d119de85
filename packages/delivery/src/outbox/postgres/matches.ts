import { sql } from "@doorbell/store";
import type { Db } from "../../context.js";
import type { MatchesAdded } from "../../matches-added.js";

/**
 * PostgreSQL: every report of an enqueue in ONE statement, as `addMatchesEach` does row by row. An
 * offer that matched a thousand intents used to send a thousand updates through one pooled
 * connection while its transaction was open. The reports go in id order, as appends send theirs.
 */
export async function addMatchesPostgres(
  db: Db,
  reports: readonly MatchesAdded[],
  now: number,
): Promise<void> {
  if (reports.length === 0) return;
  const sorted = [...reports].sort((a, b) => (a.id < b.id ? -1 : 1)); // ids are distinct
  await sql`update delivery_subscriptions s
    set agg_new_matches = s.agg_new_matches + u.added,
      agg_latest_delivered_at = u.latest,
      agg_first_at = coalesce(s.agg_first_at, ${now}::bigint),
      wake_at = case when s.agg_new_matches = 0 then ${now}::bigint else s.wake_at end,
      updated_at = ${now}::bigint
    from unnest(${sorted.map((r) => r.id)}::text[], ${sorted.map((r) => r.added)}::integer[],
      ${sorted.map((r) => r.latest)}::text[]) as u(id, added, latest)
    where s.id = u.id`.execute(db);
}
