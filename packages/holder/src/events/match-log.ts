import type { Kysely } from "@doorbell/store";
import type { Match } from "../domain/types.js";
import { offerFromRow } from "../offers/rows.js";
import type { HolderTables, OfferRow } from "../schema.js";
import type { MatchPosition } from "./match-cursor.js";

export interface LoggedMatch {
  position: MatchPosition;
  /** Undefined for a reply to another intent: never shown, but the position moves past it. */
  match: Match | undefined;
}

/**
 * One intent's matches strictly after `after`, oldest first, at most `limit` (plus whether more
 * wait): the holder_matches_since index answers it. A reply is shown only to the intent it
 * answers, as intent_list_matches does.
 */
export async function matchesAfter(
  db: Kysely<HolderTables>,
  intentId: string,
  after: MatchPosition,
  limit: number,
): Promise<{ matches: LoggedMatch[]; more: boolean }> {
  const rows = (await db
    .selectFrom("holder_matches as m")
    .innerJoin("holder_offers as o", "o.id", "m.offer_id")
    .selectAll("o")
    .select(["m.id as match_id", "m.delivered_at as match_delivered_at"])
    .where("m.intent_id", "=", intentId)
    .where((eb) =>
      eb.or([
        eb("m.delivered_at", ">", after.at),
        eb.and([eb("m.delivered_at", "=", after.at), eb("m.id", ">", after.id)]),
      ]),
    )
    .orderBy("m.delivered_at")
    .orderBy("m.id")
    .limit(limit + 1)
    .execute()) as (OfferRow & { match_id: number; match_delivered_at: number })[];
  const more = rows.length > limit;
  if (more) rows.length = limit;
  const matches: LoggedMatch[] = [];
  for (const row of rows) {
    const at = Number(row.match_delivered_at);
    const offer = offerFromRow(row);
    const position = { at, id: Number(row.match_id) };
    const own = offer.inReplyTo === undefined || offer.inReplyTo === intentId;
    matches.push({ position, match: own ? { offer, deliveredAt: new Date(at).toISOString() } : undefined });
  }
  return { matches, more };
}

/** The newest position of an intent's log: where "start from now" starts. */
export async function headOf(db: Kysely<HolderTables>, intentId: string): Promise<MatchPosition> {
  const row = await db
    .selectFrom("holder_matches")
    .select(["id", "delivered_at"])
    .where("intent_id", "=", intentId)
    .orderBy("delivered_at", "desc")
    .orderBy("id", "desc")
    .limit(1)
    .executeTakeFirst();
  return row === undefined ? { at: 0, id: 0 } : { at: Number(row.delivered_at), id: Number(row.id) };
}
