import type { Kysely } from "@doorbell/store";
import { type MatchPosition, readMatches, START } from "../matching/reader.js";
import type { HolderTables } from "../model/tables.js";
import type { Match } from "../model/types.js";

export interface LoggedMatch {
  position: MatchPosition;
  match: Match;
}

/**
 * One intent's matches strictly after `after`, oldest first, at most `limit` (plus whether more
 * wait): the same read, in the same order, as intent_list_matches.
 */
export async function matchesAfter(
  db: Kysely<HolderTables>,
  intentId: string,
  after: MatchPosition,
  limit: number,
): Promise<{ matches: LoggedMatch[]; more: boolean }> {
  const all = await readMatches(db, intentId, after);
  const matches = all.slice(0, limit).map(({ offer, deliveredAt, position }) => ({
    position,
    match: { offer, deliveredAt: new Date(deliveredAt).toISOString() },
  }));
  return { matches, more: all.length > limit };
}

/** The newest position of an intent's matches: where "start from now" starts. */
export async function headOf(db: Kysely<HolderTables>, intentId: string): Promise<MatchPosition> {
  const all = await readMatches(db, intentId, START);
  return all.at(-1)?.position ?? START;
}
