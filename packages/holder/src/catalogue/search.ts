import { type Database, sql } from "@doorbell/store";
import { fold } from "../matching/rule.js";
import { offerFromRow } from "../model/offer-rows.js";
import type { HolderTables, OfferRow } from "../model/tables.js";
import { HolderError, type Offer } from "../model/types.js";
import { type SearchThread, searchThreadFor } from "./search-thread.js";

/**
 * The holder's ordinary catalogue search (intent_search_offers) over the full-text index of
 * migration 2. Catalogue offers only: a seller's reply belongs to the one intent it answers and
 * never shows up here; withdrawn offers neither.
 *
 * The statement is cut into words (case and accents ignored, common English, Slovak and Czech
 * function words dropped); each word matches as a prefix ("octav" finds "Octavia"). Offers with
 * every word come first, newest first. When no offer has them all, offers with any of them are
 * returned instead, the most relevant first (so a sentence an assistant passes through still
 * finds something).
 */

export const SEARCH_LIMITS = { statementMax: 500, termsMax: 8, termMax: 40, resultsMax: 100 } as const;

const STOPWORDS = new Set([
  // English
  "a",
  "an",
  "the",
  "and",
  "or",
  "of",
  "in",
  "on",
  "for",
  "with",
  "to",
  "at",
  "by",
  "from",
  "near",
  "under",
  "over",
  "up",
  "i",
  "we",
  "want",
  "looking",
  "buy",
  "need",
  "my",
  "some",
  "any",
  "me",
  // Slovak and Czech (folded)
  "v",
  "vo",
  "ve",
  "na",
  "do",
  "z",
  "zo",
  "ze",
  "s",
  "so",
  "se",
  "pre",
  "pro",
  "za",
  "od",
  "pri",
  "u",
  "k",
  "ku",
  "o",
  "alebo",
  "nebo",
  "aj",
  "je",
  "chcem",
  "chci",
  "hladam",
  "hledam",
  "kupim",
  "koupim",
]);

/** The words a statement is searched by (folded, deduplicated, at most 8). */
export function searchTerms(statement: string): string[] {
  const terms: string[] = [];
  for (const token of fold(statement).split(/[^\p{L}\p{N}]+/u)) {
    if (token === "" || STOPWORDS.has(token)) continue;
    const term = token.slice(0, SEARCH_LIMITS.termMax);
    if (!terms.includes(term)) terms.push(term);
    if (terms.length === SEARCH_LIMITS.termsMax) break;
  }
  return terms;
}

export function validateSearch(statement: unknown, limit: unknown): { statement: string; limit: number } {
  if (typeof statement !== "string" || statement.trim() === "") {
    throw new HolderError(
      "ERR_HOLDER_INVALID",
      "statement must be a non-empty string of words to search for",
    );
  }
  if (statement.length > SEARCH_LIMITS.statementMax) {
    throw new HolderError(
      "ERR_HOLDER_INVALID",
      `statement must be at most ${SEARCH_LIMITS.statementMax} characters (got ${statement.length})`,
    );
  }
  if (
    typeof limit !== "number" ||
    !Number.isInteger(limit) ||
    limit < 1 ||
    limit > SEARCH_LIMITS.resultsMax
  ) {
    throw new HolderError(
      "ERR_HOLDER_INVALID",
      `limit must be a whole number from 1 to ${SEARCH_LIMITS.resultsMax} (got ${String(limit)})`,
    );
  }
  return { statement, limit };
}

type Mode = "all" | "any";

/**
 * The cost bound of one search: a search's words are at most 8; each word's
 * prefix stands for at most PREFIX_WORDS indexed words; only the CANDIDATES newest offers that
 * match are ranked. A statement like "1 2 3 4 5 6 7 8" then costs a few milliseconds instead of
 * ranking most of the catalogue on the event loop.
 */
export const SEARCH_COST = { prefixWords: 16, candidates: 300 } as const;
// On a SQLite file the work also runs off the event loop (search-thread.ts); PostgreSQL runs it in
// its own process.

/** Connections that have the vocabulary view (a temp table: per connection, never in the file). */
const withVocabulary = new WeakSet<object>();

/** The indexed words that start with `term` (itself first when indexed), at most PREFIX_WORDS of them. */
async function expand(store: Database<HolderTables>, term: string): Promise<string[]> {
  if (!withVocabulary.has(store)) {
    await sql`create virtual table if not exists temp.holder_offer_search_vocab
      using fts5vocab(main, holder_offer_search, row)`.execute(store.db);
    withVocabulary.add(store);
  }
  const rows = await sql<{ term: string }>`
    select term from temp.holder_offer_search_vocab
    where term >= ${term} and term < ${`${term}\uffff`}
    limit ${SEARCH_COST.prefixWords}`.execute(store.db);
  return rows.rows.map((row) => row.term);
}

async function querySqlite(
  store: Database<HolderTables>,
  terms: string[],
  mode: Mode,
  limit: number,
): Promise<OfferRow[]> {
  const groups: string[] = [];
  for (const term of terms) {
    const words = await expand(store, term);
    if (words.length === 0) {
      if (mode === "all") return [];
      continue;
    }
    // Index words hold only letters and digits, so quoting makes each a plain FTS5 term.
    groups.push(`(${words.map((word) => `"${word}"`).join(" OR ")})`);
  }
  if (groups.length === 0) return [];
  const match = groups.join(mode === "all" ? " AND " : " OR ");
  const rank = mode === "any";
  // The newest matching index rows first, bounded; CROSS JOIN keeps SQLite from scanning offers.
  const result = await sql<OfferRow>`
    with c as materialized (
      select rowid as search_id${rank ? sql`, bm25(holder_offer_search, 2.0, 1.0) as score` : sql``}
      from holder_offer_search where holder_offer_search match ${match}
      order by rowid desc limit ${SEARCH_COST.candidates})
    select o.* from c
    cross join holder_offer_search_keys k
    cross join holder_offers o
    where k.search_id = c.search_id and o.id = k.offer_id
      and o.source_kind = 'catalogue' and o.withdrawn_at is null
    order by ${rank ? sql`c.score, ` : sql``}o.published_at desc, o.id
    limit ${limit}`.execute(store.db);
  return result.rows;
}

async function query(
  store: Database<HolderTables>,
  terms: string[],
  mode: Mode,
  limit: number,
): Promise<OfferRow[]> {
  if (store.dialect === "sqlite") return querySqlite(store, terms, mode, limit);
  // PostgreSQL runs the search in its own process: the holder's event loop stays free.
  const tsquery = terms.map((term) => `${term}:*`).join(mode === "all" ? " & " : " | ");
  const order =
    mode === "all"
      ? sql`o.published_at desc, o.id`
      : sql`ts_rank(s.doc, to_tsquery('simple', ${tsquery})) desc, o.published_at desc, o.id`;
  const result = await sql<OfferRow>`
    select o.* from holder_offer_search s
    join holder_offers o on o.id = s.offer_id
    where s.doc @@ to_tsquery('simple', ${tsquery})
      and o.source_kind = 'catalogue' and o.withdrawn_at is null
    order by ${order}
    limit ${limit}`.execute(store.db);
  return result.rows;
}

/** A SQLite file's search thread (search-thread.ts), started with its first search. */
const threads = new WeakMap<object, SearchThread | undefined>();

function threadOf(store: Database<HolderTables>): SearchThread | undefined {
  if (!threads.has(store)) threads.set(store, searchThreadFor(store));
  return threads.get(store);
}

/**
 * Ends the store's search thread, if a search started one. The thread's message port keeps the
 * process alive, so a holder calls this on close, before it closes the store.
 */
export async function closeSearch(store: Database<HolderTables>): Promise<void> {
  const thread = threads.get(store);
  threads.delete(store);
  await thread?.close();
}

/**
 * In place (an in-memory database, which a thread cannot open): one search at a time per database, each after the event loop has had a turn: a client that
 * floods searches waits behind its own searches, and every other request runs between two of them.
 */
const queues = new WeakMap<object, Promise<unknown>>();

function inTurn<T>(store: Database<HolderTables>, run: () => Promise<T>): Promise<T> {
  const before = queues.get(store) ?? Promise.resolve();
  const mine = before.then(
    () => new Promise<void>((resolve) => setImmediate(resolve)).then(run),
    () => new Promise<void>((resolve) => setImmediate(resolve)).then(run),
  );
  queues.set(
    store,
    mine.catch(() => undefined),
  );
  return mine;
}

export async function searchOffers(
  store: Database<HolderTables>,
  statement: string,
  limit: number,
): Promise<Offer[]> {
  const valid = validateSearch(statement, limit);
  const terms = searchTerms(valid.statement);
  if (terms.length === 0) return [];
  const thread = threadOf(store);
  if (thread !== undefined) {
    const rows = await thread.search({ terms, limit: valid.limit, ...SEARCH_COST });
    return rows.map(offerFromRow);
  }
  const run = async () => {
    let rows = await query(store, terms, "all", valid.limit);
    if (rows.length === 0 && terms.length > 1) rows = await query(store, terms, "any", valid.limit);
    return rows.map(offerFromRow);
  };
  // PostgreSQL searches in its own process; an in-memory SQLite database takes turns.
  return store.dialect === "sqlite" ? inTurn(store, run) : run();
}
