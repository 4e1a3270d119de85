import { type Database, type DialectName, type Kysely, PostgresAdapter, sql } from "@doorbell/store";
import { offerFromRow } from "../model/offer-rows.js";
import type { HolderTables, IntentRow, OfferRow } from "../model/tables.js";
import type { Offer } from "../model/types.js";
import { fits, intentFilter, offerFacts } from "./rule.js";

/**
 * Matches are read, not written: an intent's matches are the offers that fit it by the rule in
 * rule.ts, each delivered when it entered matching (`matched_at`) or, for offers that were already
 * there, when the intent's current criteria took effect (`matching_since`). Seller replies are
 * matches of the intent they answer only, delivered when accepted. Nothing is stored per
 * (offer, intent), so writing a new offer costs the same at 1,000 intents as at 1,000,000 —
 * the in-memory index only says whom to notify.
 *
 * The order is (deliveredAt, match_seq), the same on every path: intent_list_matches, the manage
 * page, the e-mail digest and the Events log.
 */

/** A place in one intent's matches: the last (deliveredAt ms, offer match_seq) seen. */
export interface MatchPosition {
  at: number;
  id: number;
}

export const START: MatchPosition = { at: 0, id: 0 };

export interface ReadMatch {
  offer: Offer;
  /** ms since the epoch */
  deliveredAt: number;
  position: MatchPosition;
}

type Row = OfferRow & {
  from_replies: number;
  i_id: string;
  i_category: IntentRow["category"];
  i_country: IntentRow["country"];
  i_region: string | null;
  i_budget_amount: number | null;
  i_budget_currency: IntentRow["budget_currency"];
  i_criteria_json: string | null;
  i_valid_until: number;
  i_matching_since: number;
  i_ended_seq: number | null;
  i_scan_since: number | null;
  i_scan_to_seq: number | null;
  last_at: number;
  last_seq: number;
};

type CompiledQuery = Parameters<Database<HolderTables>["read"]>[0];

/** Runs a compiled read; the matching service passes the store's hot path (`Database.read`). */
export type ReadCompiled = (query: CompiledQuery) => Promise<readonly unknown[]>;

const INTENT_COLUMNS = sql.raw(`i.id as i_id, i.category as i_category, i.country as i_country,
  i.region as i_region, i.budget_amount as i_budget_amount, i.budget_currency as i_budget_currency,
  i.criteria_json as i_criteria_json, i.valid_until as i_valid_until,
  i.matching_since as i_matching_since, i.ended_seq as i_ended_seq,
  i.scan_since as i_scan_since, i.scan_to_seq as i_scan_to_seq,
  (select matched_at from holder_offers
    where match_seq = (select max(match_seq) from holder_offers)) as last_at,
  (select max(match_seq) from holder_offers) as last_seq`);

/**
 * One statement for every read, compiled once per database handle: the candidates the database can
 * rule out by itself (category, country, region, budget, and on the (category, country[, region],
 * matched_at) indexes, time), with the intent's columns on each row for the rest of the rule. Offers
 * that were there before matching_since all count as delivered at it, so only a position past it
 * narrows the range (`from`, the earliest deliveredAt wanted). An empty answer is this one indexed
 * statement.
 */
const compiled = new WeakMap<Kysely<HolderTables>, CompiledQuery>();
const PARAMETER = { id: "\u0000intent", from: -101, afterAt: -102, afterSeq: -103 } as const;

/**
 * Reads that look at more candidate offers than this leave a note on the intent (the scan
 * columns): "no match between the newest one read and the last arrival then". The next read after
 * that newest match starts at that arrival instead, so an intent that rarely fits does not look at
 * the same non-fitting offers on every poll. The note stays true whatever happens later (a changed
 * offer enters matching anew; withdrawals only remove matches) until the criteria change, which
 * moves matching_since and voids it.
 */
const NOTE_AFTER_CANDIDATES = 64;
export function readStatement(db: Kysely<HolderTables>): CompiledQuery {
  let query = compiled.get(db);
  if (query === undefined) {
    const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
    // Sentinel parameters, swapped for each call's values (see PARAMETER): the id, `from`, and the
    // position read after (its deliveredAt and seq).
    const id = sql`${PARAMETER.id}`;
    const [from, afterAt, afterSeq] = [PARAMETER.from, PARAMETER.afterAt, PARAMETER.afterSeq].map(
      (value) => sql`cast(${value} as bigint)`,
    );
    // The intent's note applies to this read (see NOTE_AFTER_CANDIDATES): never null.
    const noted = sql`(case when i.scan_since = i.matching_since and (${afterAt} > i.scan_newest_at
      or (${afterAt} = i.scan_newest_at and ${afterSeq} >= i.scan_newest_seq)) then 1 else 0 end) = 1`;
    const fits = (
      region: ReturnType<typeof sql>,
    ) => sql`o.category = i.category and o.country = i.country ${region}
        and o.source_kind = 'catalogue'
        and o.matched_at >= (case
          when ${noted} and i.scan_to_at > ${from} then i.scan_to_at
          when ${from} <= i.matching_since then 0
          else ${from} end)
        and not (${noted} and o.match_seq <= i.scan_to_seq)
        and (i.budget_currency is null
          or (o.price_currency = i.budget_currency and o.price_amount <= i.budget_amount))`;
    // PostgreSQL plans a join of the one intent with the offers as a hash join over every offer of
    // its category and country (the lower bound on matched_at depends on the intent's columns, so
    // it cannot bound an index scan there): a pull then cost as much as the catalogue was long.
    // LATERAL makes the intent's columns parameters of the offers' scan, which the (category,
    // country[, region], matched_at) index then bounds; `offset 0` keeps the planner from pulling
    // the subquery back up into that same join. SQLite's nested loop does this already.
    const catalogue = (region: ReturnType<typeof sql>) =>
      postgres
        ? sql`select o.*, 0 as from_replies, ${INTENT_COLUMNS}
      from holder_intents as i
      cross join lateral (select * from holder_offers as o where ${fits(region)} offset 0) as o
      where i.id = ${id} and i.matching_since is not null`
        : sql`select o.*, 0 as from_replies, ${INTENT_COLUMNS}
      from holder_intents as i
      join holder_offers as o on ${fits(region)}
      where i.id = ${id} and i.matching_since is not null`;
    // Two branches, so that an intent naming a region reads only that region's arrivals.
    query = sql`${catalogue(sql`and i.region is not null and o.region = i.region`)}
      union all
      ${catalogue(sql`and i.region is null`)}
      union all
      select o.*, 1 as from_replies, ${INTENT_COLUMNS}
      from holder_intents as i
      join holder_offers as o on o.in_reply_to = i.id
      where i.id = ${id} and i.matching_since is not null and o.source_kind = 'reply'
        and o.matched_at >= ${from}`.compile(db);
    compiled.set(db, query);
  }
  return query;
}

/** A position's seq as the database compares it (the end of a page is Infinity). */
const seqOf = (after: MatchPosition): number => Math.min(after.id, Number.MAX_SAFE_INTEGER);

/** The read statement with one call's values: intent `intentId`, matches strictly after `after`. */
export function boundRead(db: Kysely<HolderTables>, intentId: string, after: MatchPosition): CompiledQuery {
  const statement = readStatement(db);
  // The earliest deliveredAt a match after `after` can have (ms are whole: strictly after a
  // `since` is from the next one).
  const from = after.id === Number.POSITIVE_INFINITY ? after.at + 1 : after.at;
  const values = new Map<unknown, unknown>([
    [PARAMETER.id, intentId],
    [PARAMETER.from, from],
    [PARAMETER.afterAt, after.at],
    [PARAMETER.afterSeq, seqOf(after)],
  ]);
  return { ...statement, parameters: statement.parameters.map((value) => values.get(value)) };
}

/** The matches of intent `intentId` strictly after `after`, oldest first. */
export async function readMatches(
  db: Kysely<HolderTables>,
  intentId: string,
  after: MatchPosition,
  read: ReadCompiled = async (query) => (await db.executeQuery(query)).rows,
): Promise<ReadMatch[]> {
  const rows = (await read(boundRead(db, intentId, after))) as Row[];
  const first = rows[0];
  if (first === undefined) return [];
  const intent = {
    id: first.i_id,
    category: first.i_category,
    country: first.i_country,
    region: first.i_region,
    budget_amount: first.i_budget_amount,
    budget_currency: first.i_budget_currency,
    criteria_json: first.i_criteria_json,
    valid_until: first.i_valid_until,
  };
  const filter = intentFilter(intent);
  if (filter === undefined) return [];
  const since = Number(first.i_matching_since);
  // Nothing entered matching after a withdrawal reaches the intent (validUntil: see `fits`).
  const lastSeq = first.i_ended_seq === null ? Number.POSITIVE_INFINITY : Number(first.i_ended_seq);

  const matches: ReadMatch[] = [];
  for (const row of rows) {
    const fromReplies = Number(row.from_replies) === 1;
    const matchedAt = Number(row.matched_at);
    const deliveredAt = fromReplies ? matchedAt : Math.max(matchedAt, since);
    const position = { at: deliveredAt, id: Number(row.match_seq) };
    if (!isAfter(position, after) || position.id > lastSeq) continue;
    // An offer withdrawn before it reached the intent never did; one withdrawn later stays delivered.
    if (row.withdrawn_at !== null && Number(row.withdrawn_at) <= deliveredAt) continue;
    const offer = offerFromRow(row);
    if (!fromReplies && !fits(filter, offerFacts(offer), deliveredAt)) continue;
    matches.push({ offer, deliveredAt, position });
  }
  matches.sort((a, b) => a.position.at - b.position.at || a.position.id - b.position.id);
  if (rows.length > NOTE_AFTER_CANDIDATES) {
    const newest = matches.at(-1)?.position ?? { at: after.at, id: seqOf(after) };
    await leaveNote(db, first, since, newest);
  }
  return matches;
}

/** See NOTE_AFTER_CANDIDATES. A note that cannot be written is only a missed shortcut. */
async function leaveNote(db: Kysely<HolderTables>, row: Row, since: number, newest: MatchPosition) {
  const scannedTo = { at: Number(row.last_at), seq: Number(row.last_seq) };
  const current = row.i_scan_since !== null && Number(row.i_scan_since) === since;
  if (current && row.i_scan_to_seq !== null && Number(row.i_scan_to_seq) >= scannedTo.seq) return;
  await db
    .updateTable("holder_intents")
    .set({
      scan_since: since,
      scan_newest_at: newest.at,
      scan_newest_seq: newest.id,
      scan_to_at: scannedTo.at,
      scan_to_seq: scannedTo.seq,
    })
    .where("id", "=", row.i_id)
    .where("matching_since", "=", since)
    .execute()
    .catch(() => undefined);
}

export function isAfter(position: MatchPosition, after: MatchPosition): boolean {
  return position.at > after.at || (position.at === after.at && position.id > after.id);
}

/** An arbitrary constant naming the lock that orders offers entering matching on PostgreSQL. */
const ARRIVALS_LOCK = 7_340_301;

/**
 * The last offer to enter matching, inside a writing transaction. On PostgreSQL it takes a
 * transaction lock that writers of arrivals (and withdrawals) take in turn until commit, so no
 * offer can commit behind a position someone has already read or recorded; SQLite's one writer
 * gives the same for free.
 */
export async function lastArrival(
  trx: Kysely<HolderTables>,
  dialect: DialectName,
): Promise<{ at: number; seq: number }> {
  if (dialect === "postgres") await sql`select pg_advisory_xact_lock(${ARRIVALS_LOCK})`.execute(trx);
  const last = await trx
    .selectFrom("holder_offers")
    .select(["match_seq", "matched_at"])
    .where("match_seq", "is not", null)
    .orderBy("match_seq", "desc")
    .limit(1)
    .executeTakeFirst();
  return last === undefined
    ? { at: 0, seq: 0 }
    : { at: Number(last.matched_at), seq: Number(last.match_seq) };
}

/**
 * Places for offers entering matching now: `match_seq` values after the last one, and a
 * `matched_at` later than the last one's (a clock that steps back cannot reorder matches).
 */
export async function reserveArrivals(
  trx: Kysely<HolderTables>,
  dialect: DialectName,
  now: number,
): Promise<{ at: number; firstSeq: number }> {
  const last = await lastArrival(trx, dialect);
  // Each write a millisecond after the last at least: a reader that has seen one never later
  // finds another at the same instant behind it (`since` is strict, by the millisecond).
  return { at: Math.max(now, last.at + 1), firstSeq: last.seq + 1 };
}
