import { type Database, type DialectName, type Kysely, sql } from "@doorbell/store";
import type { HolderContext } from "../context.js";
import type { MatchService } from "../domain/services.js";
import { HolderError, type Match, type Offer, type Principal } from "../domain/types.js";
import { offerFromRow } from "../offers/rows.js";
import type { HolderTables, OfferRow } from "../schema.js";
import { IntentIndex } from "./intent-index.js";
import { fits, type IntentFilterSource, intentFilter, type MatchableOffer, offerFacts } from "./rule.js";

/**
 * Matching: an in-memory index of the active intents (loaded from holder_intents at start, kept
 * current through `onActivated` / `onEnded`), used to find the intents a new offer fits; and the
 * reverse, a newly active intent against the current catalogue, in SQL. Matches are recorded in
 * holder_matches with delivered_at = now, then `onMatched` learns which intents got new ones.
 *
 * The database stays the authority: a match is only written for an intent that is active and
 * valid in holder_intents at that moment, so an index that is a little behind (another process
 * withdrew the intent) can never deliver to a withdrawn, expired or draft intent.
 */

export interface MatchingOptions {
  /**
   * Which intent a principal may read (the intent service's rule, signed-in clients included).
   * Without it only intentCodes read, each its own intent.
   */
  readableIntent?(principal: Principal, id: string | undefined): Promise<string>;
  /**
   * Called after the matches are committed with the intents that got new ones (the e-mail
   * digest, later doorbells). Errors are logged and swallowed: the matches are recorded and
   * `mailed_at` stays null for the digest to find later.
   */
  onMatched?(intentIds: string[]): void | Promise<void>;
  /**
   * Called inside the transaction that records matches, with the rows it inserted, so that
   * outbox rows can be written atomically with them (DESIGN: no event without its delivery row).
   */
  inTransaction?(trx: Kysely<HolderTables>, recorded: readonly RecordedMatch[]): Promise<void>;
  /** Rows per page when loading active intents at start (default 10,000). */
  loadPageSize?: number;
}

export interface RecordedMatch {
  intentId: string;
  offerId: string;
}

export interface MatchingService extends MatchService {
  /** Loads the active intents into the index; idempotent. Other methods wait for it. */
  start(): Promise<{ activeIntents: number }>;
  /** Rebuilds the index from holder_intents (e.g. after another process changed intents). */
  reload(): Promise<{ activeIntents: number }>;
  /**
   * The intents side calls this after an intent became active (committed): the intent joins the
   * index and is matched against the current catalogue offers. Also right for a changed active
   * intent. A non-active intent is only removed from the index.
   */
  onActivated(intentId: string): Promise<{ matched: number }>;
  /** The intents side calls this when an intent is withdrawn or expires. */
  onEnded(intentId: string): void;
  /** The ids of the indexed active intents `offer` fits now (the rule in rule.ts). Needs `start`. */
  matchOffer(offer: MatchableOffer): string[];
  /**
   * Finds and records the matches of new or changed catalogue offers inside `trx` (one statement
   * per 5,000 pairs). Returns what was inserted; call `notify` after the commit.
   */
  recordForOffers(trx: Kysely<HolderTables>, offers: readonly Offer[]): Promise<RecordedMatch[]>;
  /** Records a reply as a match of the one intent it answers, if it fits it; inside `trx`. */
  recordReply(trx: Kysely<HolderTables>, offer: Offer, intentId: string): Promise<RecordedMatch[]>;
  /** Calls `onMatched` with the distinct intents of `recorded` (after the commit). */
  notify(recorded: readonly RecordedMatch[]): Promise<void>;
  /** How many active intents the index holds. */
  readonly activeIntents: number;
}

const PAIRS_PER_STATEMENT = 5_000;
/** Matches returned by one listMatches call (plus any sharing the last one's deliveredAt). */
export const LIST_MATCHES_MAX = 1_000;

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/** The intent columns the matching rule reads (see `intentFilter`). */
export const FILTER_COLUMNS = [
  "id",
  "category",
  "country",
  "region",
  "budget_amount",
  "budget_currency",
  "criteria_json",
  "valid_until",
] as const;

/**
 * Inserts the pairs whose intent is active and valid now; returns the pairs actually inserted.
 *
 * The pairs travel as one JSON parameter per statement (compiling thousands of bound tuples costs
 * more than the insert), sorted by intent id so that consecutive rows land on neighbouring pages
 * of the two indexes that start with intent_id (about three times faster on SQLite). On SQLite the
 * CROSS JOIN keeps the planner driving from the pairs into holder_intents' primary key.
 */
async function insertMatches(
  dialect: DialectName,
  trx: Kysely<HolderTables>,
  pairs: readonly RecordedMatch[],
  now: number,
): Promise<RecordedMatch[]> {
  // Stable: one intent's matches keep the order of the offers (the order listMatches shows them in).
  const sorted = [...pairs].sort((a, b) => (a.intentId < b.intentId ? -1 : a.intentId > b.intentId ? 1 : 0));
  const inserted: RecordedMatch[] = [];
  for (let start = 0; start < sorted.length; start += PAIRS_PER_STATEMENT) {
    const json = JSON.stringify(
      sorted.slice(start, start + PAIRS_PER_STATEMENT).map((p) => [p.intentId, p.offerId]),
    );
    const query =
      dialect === "sqlite"
        ? sql<{ intent_id: string; offer_id: string }>`
          insert into holder_matches (intent_id, offer_id, delivered_at)
          select json_extract(j.value, '$[0]'), json_extract(j.value, '$[1]'), cast(${now} as bigint)
          from json_each(${json}) as j cross join holder_intents as i
          where i.id = json_extract(j.value, '$[0]') and i.status = 'active' and i.valid_until > ${now}
          on conflict (intent_id, offer_id) do nothing
          returning intent_id, offer_id`
        : sql<{ intent_id: string; offer_id: string }>`
          insert into holder_matches (intent_id, offer_id, delivered_at)
          select j.value ->> 0, j.value ->> 1, cast(${now} as bigint)
          from jsonb_array_elements(cast(${json} as jsonb)) with ordinality as j (value, n)
          join holder_intents as i on i.id = j.value ->> 0
          where i.status = 'active' and i.valid_until > ${now}
          order by j.n
          on conflict (intent_id, offer_id) do nothing
          returning intent_id, offer_id`;
    const result = await query.execute(trx);
    for (const row of result.rows) inserted.push({ intentId: row.intent_id, offerId: row.offer_id });
  }
  return inserted;
}

export function createMatchingService(ctx: HolderContext, options: MatchingOptions = {}): MatchingService {
  const { store, clock, log } = ctx;
  const pageSize = options.loadPageSize ?? 10_000;
  const listQueries = compileListQueries(store.db);
  let index = new IntentIndex();
  let loading: Promise<{ activeIntents: number }> | undefined;
  let loaded = false;
  /** Intents ended while a load was reading pages: taken out of the new index when it takes over. */
  let endedDuringLoad: Set<string> | undefined;

  async function load(): Promise<{ activeIntents: number }> {
    endedDuringLoad = new Set();
    const next = new IntentIndex();
    next.beginBulk();
    let after = "";
    for (;;) {
      // Walk the primary key: on SQLite, `+status` keeps the planner off the status index, which
      // would sort every active intent again for each page.
      const status = store.dialect === "sqlite" ? sql<string>`+status` : sql<string>`status`;
      const rows: IntentFilterSource[] = await store.db
        .selectFrom("holder_intents")
        .select(FILTER_COLUMNS)
        .where(status, "=", "active")
        .where("id", ">", after)
        .orderBy("id")
        .limit(pageSize)
        .execute();
      for (const row of rows) {
        const filter = intentFilter(row);
        if (filter) next.add(filter);
      }
      const last = rows.at(-1);
      if (last === undefined || rows.length < pageSize) break;
      after = last.id;
    }
    next.endBulk();
    for (const id of endedDuringLoad) next.remove(id);
    endedDuringLoad = undefined;
    index = next;
    loaded = true;
    return { activeIntents: index.size };
  }

  /** Starts (or joins) a load; a failed load is forgotten so the next call tries again. */
  function startLoad(): Promise<{ activeIntents: number }> {
    const attempt = load().catch((error: unknown) => {
      endedDuringLoad = undefined;
      if (loading === attempt) loading = undefined;
      throw error;
    });
    loading = attempt;
    return attempt;
  }

  function ready(): Promise<unknown> {
    return loading ?? startLoad();
  }

  async function notify(recorded: readonly RecordedMatch[]): Promise<void> {
    if (recorded.length === 0 || !options.onMatched) return;
    const ids = [...new Set(recorded.map((match) => match.intentId))];
    try {
      await options.onMatched(ids);
    } catch (error) {
      // Never the ids or the error text (it may quote data): the code and the count only.
      log.warn(
        { code: (error as { code?: unknown })?.code ?? "unknown", intents: ids.length },
        "onMatched failed; the matches are recorded and wait for the next digest",
      );
    }
  }

  async function record(
    trx: Kysely<HolderTables>,
    pairs: readonly RecordedMatch[],
  ): Promise<RecordedMatch[]> {
    if (pairs.length === 0) return [];
    const inserted = await insertMatches(store.dialect, trx, pairs, clock());
    if (inserted.length > 0 && options.inTransaction) await options.inTransaction(trx, inserted);
    return inserted;
  }

  function matchOffer(offer: MatchableOffer): string[] {
    if (!loaded)
      throw new HolderError("ERR_HOLDER_CONFLICT", "matching has not loaded the active intents yet");
    return index.match(offerFacts(offer), clock());
  }

  return {
    get activeIntents() {
      return index.size;
    },

    async start() {
      await ready();
      return { activeIntents: index.size };
    },

    async reload() {
      await ready();
      return startLoad();
    },

    async onActivated(intentId) {
      await ready();
      const row = await store.db
        .selectFrom("holder_intents")
        .select([...FILTER_COLUMNS, "status"])
        .where("id", "=", intentId)
        .executeTakeFirst();
      index.remove(intentId);
      if (row === undefined || row.status !== "active") return { matched: 0 };
      const filter = intentFilter(row);
      if (filter === undefined) return { matched: 0 };
      index.add(filter);

      let query = store.db
        .selectFrom("holder_offers")
        .selectAll()
        .where("category", "=", filter.category)
        .where("country", "=", filter.country)
        .where("source_kind", "=", "catalogue")
        .where("withdrawn_at", "is", null);
      if (filter.region !== null) query = query.where("region", "=", filter.region);
      if (filter.currency !== null) {
        query = query
          .where("price_currency", "=", filter.currency)
          .where("price_amount", "<=", filter.budget);
      }
      const now = clock();
      const pairs: RecordedMatch[] = [];
      for (const offer of await query.execute()) {
        if (fits(filter, offerFacts(offerFromRow(offer)), now)) pairs.push({ intentId, offerId: offer.id });
      }
      if (pairs.length === 0) return { matched: 0 };
      const recorded = await store.transaction((trx) => record(trx, pairs));
      await notify(recorded);
      return { matched: recorded.length };
    },

    onEnded(intentId) {
      index.remove(intentId);
      endedDuringLoad?.add(intentId);
    },

    matchOffer,

    async recordForOffers(trx, offers) {
      await ready();
      const pairs: RecordedMatch[] = [];
      for (const offer of offers) {
        if (offer.source.kind !== "catalogue") continue;
        for (const intentId of matchOffer(offer)) pairs.push({ intentId, offerId: offer.id });
      }
      return record(trx, pairs);
    },

    async recordReply(trx, offer, intentId) {
      const row = await trx
        .selectFrom("holder_intents")
        .select(FILTER_COLUMNS)
        .where("id", "=", intentId)
        .where("status", "=", "active")
        .executeTakeFirst();
      const filter = row ? intentFilter(row) : undefined;
      if (filter === undefined || !fits(filter, offerFacts(offer), clock())) return [];
      return record(trx, [{ intentId, offerId: offer.id }]);
    },

    notify,

    async listMatches(principal, id, since) {
      const intentId =
        options.readableIntent === undefined
          ? intentIdFor(principal, id)
          : await options.readableIntent(principal, id);
      let after = Number.NEGATIVE_INFINITY;
      if (since !== undefined) {
        const parsed =
          typeof since === "string" && ISO_DATE_TIME.test(since) ? Date.parse(since) : Number.NaN;
        if (Number.isNaN(parsed)) {
          throw new HolderError(
            "ERR_HOLDER_INVALID",
            'since must be an ISO 8601 date-time with a time zone, e.g. "2026-11-30T12:00:00.000Z" (a deliveredAt from an earlier answer)',
          );
        }
        after = parsed;
      }
      return listMatchesOf(store, listQueries, intentId, after);
    },
  };
}

/** The principal seam: which intent a buyer tool may read. */
function intentIdFor(principal: Principal, id: string | undefined): string {
  if (principal.kind === "intent-code") {
    if (id !== undefined && id !== principal.intentId) {
      throw new HolderError("ERR_HOLDER_FORBIDDEN", "an intentCode gives access to its own intent only");
    }
    return principal.intentId;
  }
  throw new HolderError(
    "ERR_HOLDER_FORBIDDEN",
    "signed-in access to intents is not available yet; use the intentCode returned when the intent was published",
  );
}

type MatchListRow = OfferRow & { match_id: number; match_delivered_at: number };

// Placeholders the list queries are compiled with, swapped for the call's values at each call.
const INTENT_PARAM = "\u0000intent";
const AFTER_PARAM = -1.5;

/**
 * The list query, compiled once per service (with and without `since`): building and compiling a
 * Kysely query costs more CPU than SQLite takes to answer the empty case, and the empty answer is
 * what polling agents get almost every time. Only the values change from call to call.
 */
function compileListQueries(db: Kysely<HolderTables>) {
  const base = () =>
    db
      .selectFrom("holder_matches as m")
      .innerJoin("holder_offers as o", "o.id", "m.offer_id")
      .selectAll("o")
      .select(["m.id as match_id", "m.delivered_at as match_delivered_at"]);
  const page = (query: ReturnType<typeof base>) =>
    query
      .where("m.intent_id", "=", INTENT_PARAM)
      .orderBy("m.delivered_at")
      .orderBy("m.id")
      .limit(LIST_MATCHES_MAX + 1)
      .compile();
  return {
    all: page(base()),
    since: page(base().where("m.delivered_at", ">", AFTER_PARAM)),
    base,
  };
}

type ListQueries = ReturnType<typeof compileListQueries>;

/**
 * One indexed query (holder_matches_since) answers the usual case, the empty one included. A page
 * holds at most LIST_MATCHES_MAX matches, extended by every match sharing the last one's
 * deliveredAt, so that `since = last deliveredAt` never skips a match; `more` says another call
 * with that `since` has more.
 */
async function listMatchesOf(
  store: Database<HolderTables>,
  queries: ListQueries,
  intentId: string,
  after: number,
): Promise<{ matches: Match[]; more?: boolean }> {
  const compiled = after === Number.NEGATIVE_INFINITY ? queries.all : queries.since;
  const parameters = compiled.parameters.map((value) =>
    value === INTENT_PARAM ? intentId : value === AFTER_PARAM ? after : value,
  );
  const rows = (await store.read({ ...compiled, parameters })) as MatchListRow[];
  let more = false;
  if (rows.length > LIST_MATCHES_MAX) {
    const next = rows[LIST_MATCHES_MAX] as MatchListRow;
    rows.length = LIST_MATCHES_MAX;
    const last = rows.at(-1) as MatchListRow;
    more = true;
    if (Number(next.match_delivered_at) === Number(last.match_delivered_at)) {
      const ties = (await queries
        .base()
        .where("m.intent_id", "=", intentId)
        .where("m.delivered_at", "=", last.match_delivered_at)
        .where("m.id", ">", last.match_id)
        .orderBy("m.id")
        .execute()) as MatchListRow[];
      for (const tie of ties) rows.push(tie);
      const beyond = await store.db
        .selectFrom("holder_matches")
        .select("id")
        .where("intent_id", "=", intentId)
        .where("delivered_at", ">", last.match_delivered_at)
        .limit(1)
        .executeTakeFirst();
      more = beyond !== undefined;
    }
  }
  const matches = rows.map((row) => ({
    offer: offerFromRow(row),
    deliveredAt: new Date(Number(row.match_delivered_at)).toISOString(),
  }));
  return more ? { matches, more } : { matches };
}
