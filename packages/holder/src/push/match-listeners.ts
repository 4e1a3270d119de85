/**
 * Which subscriptions may hear of matches (push profile §6 rules 3 and 9): a real one the person
 * allowed. A test call's subscription never does, nor one still waiting for the person. The sink
 * that queues matches doorbells and the engine's check before it queues or builds one (the
 * coalesced doorbell's `carriers`) both read it from here.
 */
import type { PushDb } from "./context.js";

/** The holder's push rows that may hear of matches, as `p`. */
export function matchListeners(db: PushDb) {
  return db.selectFrom("holder_push as p").where("p.test", "=", 0).where("p.approval", "=", "granted");
}

/** Ids per query: far below SQLite's and PostgreSQL's limits on bound values. */
const IDS_PER_QUERY = 500;

/** The ids among `ids` whose subscriptions may hear of matches. */
export async function mayHearMatches(db: PushDb, ids: readonly string[]): Promise<Set<string>> {
  const allowed = new Set<string>();
  for (let i = 0; i < ids.length; i += IDS_PER_QUERY) {
    const rows = await matchListeners(db)
      .select("p.id")
      .where("p.id", "in", ids.slice(i, i + IDS_PER_QUERY))
      .execute();
    for (const row of rows) allowed.add(row.id);
  }
  return allowed;
}
