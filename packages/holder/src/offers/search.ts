import { type Database, sql } from "@doorbell/store";
import { HolderError, type Offer } from "../domain/types.js";
import { fold } from "../matching/rule.js";
import type { HolderTables, OfferRow } from "../schema.js";
import { offerFromRow } from "./rows.js";

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

async function query(
  store: Database<HolderTables>,
  terms: string[],
  mode: Mode,
  limit: number,
): Promise<OfferRow[]> {
  if (store.dialect === "sqlite") {
    // Terms hold only letters and digits, so quoting them is enough to make each a plain FTS5 phrase.
    const match = terms.map((term) => `"${term}"*`).join(mode === "all" ? " " : " OR ");
    const order =
      mode === "all"
        ? sql`o.published_at desc, o.id`
        : sql`bm25(holder_offer_search, 2.0, 1.0), o.published_at desc, o.id`;
    const result = await sql<OfferRow>`
      select o.* from holder_offer_search
      join holder_offer_search_keys k on k.search_id = holder_offer_search.rowid
      join holder_offers o on o.id = k.offer_id
      where holder_offer_search match ${match}
        and o.source_kind = 'catalogue' and o.withdrawn_at is null
      order by ${order}
      limit ${limit}`.execute(store.db);
    return result.rows;
  }
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

export async function searchOffers(
  store: Database<HolderTables>,
  statement: string,
  limit: number,
): Promise<Offer[]> {
  const valid = validateSearch(statement, limit);
  const terms = searchTerms(valid.statement);
  if (terms.length === 0) return [];
  let rows = await query(store, terms, "all", valid.limit);
  if (rows.length === 0 && terms.length > 1) rows = await query(store, terms, "any", valid.limit);
  return rows.map(offerFromRow);
}
