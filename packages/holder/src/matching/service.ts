import { type Kysely, sql } from "@doorbell/store";
import type { HolderContext } from "../context.js";
import type { FoundMatches, MatchService } from "../model/services.js";
import type { HolderTables } from "../model/tables.js";
import { HolderError, type Match, type Offer, type Principal } from "../model/types.js";
import { IntentIndex } from "./intent-index.js";
import { lastArrival, type ReadMatch, readMatches, START } from "./reader.js";
import { fits, type IntentFilterSource, intentFilter, type MatchableOffer, offerFacts } from "./rule.js";

export type { FoundMatches } from "../model/services.js";

/**
 * Matching: an in-memory index of the active intents (loaded from holder_intents at start, kept
 * current through `onActivated` / `onEnded`), used to find the intents a new offer fits — so that
 * they are told (e-mail digest, doorbells, Events). Matches themselves are not stored: reading them
 * applies the same rule to the offers in the database (reader.ts), so the database stays the
 * authority and an index that is a little behind can only delay a notification, never deliver a
 * match to a withdrawn, expired or draft intent.
 */

export interface MatchingOptions {
  /**
   * Which intent a principal may read (the intent service's rule, signed-in clients included).
   * Without it only intentCodes read, each its own intent.
   */
  readableIntent?(principal: Principal, id: string | undefined): Promise<string>;
  /**
   * Called after the offers are committed with the intents that got new matches (the e-mail
   * digest, doorbells, Events). Errors are logged and swallowed: the matches are there to read and
   * the digest's watermark stays where it was for the next digest.
   */
  onMatched?(intentIds: string[]): void | Promise<void>;
  /**
   * Called inside the transaction that commits the offers, with the matches they make, so that
   * outbox rows are written atomically with them (DESIGN: no event without its delivery row).
   */
  inTransaction?(trx: Kysely<HolderTables>, found: FoundMatches): Promise<void>;
  /**
   * Called inside a transaction that holds the arrivals lock (no offer enters matching until it
   * commits), after the intent joined this process's index: ring for the intent's matches that
   * no doorbell counted yet. Returns how many it counted (issue 14 item 4).
   */
  catchUp?(trx: Kysely<HolderTables>, intentId: string): Promise<number>;
  /** Rows per page when loading active intents at start (default 10,000). */
  loadPageSize?: number;
}

/** How many of `found` each wanted intent has (for the few intents told one by one). */
export function countFor(found: FoundMatches, wanted: ReadonlyMap<string, unknown>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const { intentIds } of found.byOffer) {
    for (const id of intentIds) if (wanted.has(id)) counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

function single(intentId: string, offerIds: readonly string[], deliveredAt: number): FoundMatches {
  return {
    deliveredAt,
    byOffer: offerIds.map((offerId) => ({ offerId, intentIds: [intentId] })),
    count: offerIds.length,
    firstInRound: offerIds.length > 0 ? [intentId] : [],
  };
}

export interface MatchingService extends MatchService {
  /** Loads the active intents into the index; idempotent. Other methods wait for it. */
  start(): Promise<{ activeIntents: number }>;
  /** Rebuilds the index from holder_intents (e.g. after another process changed intents). */
  reload(): Promise<{ activeIntents: number }>;
  /**
   * The intents side calls this after an intent became active or its criteria changed
   * (committed): the intent joins the index and the current catalogue offers that fit it are
   * announced. A non-active intent is only removed from the index.
   */
  onActivated(intentId: string): Promise<{ matched: number }>;
  /** The intents side calls this when an intent is withdrawn or expires. */
  onEnded(intentId: string): void;
  /**
   * Another process activated, changed or ended this intent (issue #14): the index follows the
   * database, and what this process's imports wrote before its index knew the intent is rung now
   * (catch-up: only what no doorbell counted yet).
   */
  refresh(intentId: string): Promise<void>;
  /**
   * At the end of an import that started at `startedAt` (this process's clock): the intents that
   * became active or changed since (allowing for clocks a minute apart) are refreshed and caught
   * up, in case this process never heard of them (another process on SQLite, a missed
   * notification). Failures are logged, never thrown.
   */
  catchUpSince(startedAt: number): Promise<void>;
  /** The ids of the indexed active intents `offer` fits now (the rule in rule.ts). Needs `start`. */
  matchOffer(offer: MatchableOffer): string[];
  /**
   * The matches new or changed catalogue offers make, found in the index, inside the transaction
   * that writes the offers with `matched_at = deliveredAt`. Call `notify` after the commit.
   */
  matchNewOffers(
    trx: Kysely<HolderTables>,
    offers: readonly Offer[],
    deliveredAt: number,
    round?: number,
  ): Promise<FoundMatches>;
  /**
   * A round for `matchNewOffers` calls whose `firstInRound` together name each intent once (one
   * import's batches). Without one, each call is its own round.
   */
  newRound(): number;
  /** A reply accepted for the one intent it answers (written with `matched_at = deliveredAt`). */
  matchReply(
    trx: Kysely<HolderTables>,
    offer: Offer,
    intentId: string,
    deliveredAt: number,
  ): Promise<FoundMatches>;
  /** Calls `onMatched` with the intents that got new matches (after the commit). */
  notify(intentIds: Iterable<string>): Promise<void>;
  /** How many active intents the index holds. */
  readonly activeIntents: number;
}

/** Matches returned by one listMatches call (plus any sharing the last one's deliveredAt). */
export const LIST_MATCHES_MAX = 1_000;

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/** The intent columns the matching rule reads (see `intentFilter`). */
/** How far apart the clocks of processes sharing one database may be (see catchUpSince). */
export const CLOCK_SKEW_MS = 60_000;
/** How long a followed intent is remembered (see `followed`): imports longer than this re-check. */
const FOLLOWED_KEPT_MS = 60 * 60_000;

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

export function createMatchingService(ctx: HolderContext, options: MatchingOptions = {}): MatchingService {
  const { store, clock, log } = ctx;
  const pageSize = options.loadPageSize ?? 10_000;
  let index = new IntentIndex();
  let loading: Promise<{ activeIntents: number }> | undefined;
  let loaded = false;
  /** Rounds of `matchNewOffers`, counted here so that a reloaded index never sees one twice. */
  let rounds = 0;
  /** Intents ended while a load was reading pages: taken out of the new index when it takes over. */
  let endedDuringLoad: Set<string> | undefined;
  /**
   * The criteria (matching_since) this process last followed and caught up for each intent,
   * lately: catchUpSince skips those (a catch-up after they joined the index already counted
   * everything). Oldest first; entries older than FOLLOWED_KEPT_MS are dropped.
   */
  const followed = new Map<string, number>();

  function remember(intentId: string, since: number | null): void {
    if (since === null) return;
    followed.delete(intentId);
    followed.set(intentId, Number(since));
    const old = clock() - FOLLOWED_KEPT_MS;
    for (const [id, at] of followed) {
      if (at >= old) break;
      followed.delete(id);
    }
  }

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

  /**
   * Rings for `intentId`'s matches no doorbell counted yet. The caller has put the intent in the
   * index first: the arrivals lock then waits for every import batch that matched without it, and
   * every batch after this one matches with it (issue 14 item 4).
   */
  async function catchUp(intentId: string): Promise<number> {
    const counted = options.catchUp;
    if (counted === undefined) return 0;
    return store.transaction(async (trx) => {
      await lastArrival(trx, store.dialect);
      return counted(trx, intentId);
    });
  }

  /** Follows the database for one intent; true when it is active with criteria (in the index). */
  async function follow(intentId: string): Promise<number | null | undefined> {
    const row = await store.db
      .selectFrom("holder_intents")
      .select([...FILTER_COLUMNS, "status", "matching_since"])
      .where("id", "=", intentId)
      .executeTakeFirst();
    const filter = row?.status === "active" ? intentFilter(row) : undefined;
    index.remove(intentId);
    if (filter === undefined) endedDuringLoad?.add(intentId);
    else index.add(filter);
    return filter === undefined ? undefined : (row?.matching_since ?? null);
  }

  /** refresh(): the index follows; then what no doorbell counted yet is rung and the intent told. */
  async function refresh(intentId: string): Promise<void> {
    await ready();
    const since = await follow(intentId);
    if (since === undefined) return;
    const counted = await catchUp(intentId);
    remember(intentId, since);
    // The digest reads from its own watermark (telling twice mails nothing twice): told when a
    // doorbell rang or a match waits for the mail, not on every refresh.
    if (counted > 0 || (await unmailed(intentId))) await notify([intentId]);
  }

  /** Whether a confirmed intent has matches after its digest's watermark. */
  async function unmailed(intentId: string): Promise<boolean> {
    const row = await store.db
      .selectFrom("holder_intents")
      .select(["confirmed_at", "mailed_at", "mailed_seq"])
      .where("id", "=", intentId)
      .executeTakeFirst();
    if (row === undefined || row.confirmed_at === null) return false;
    const mailed = row.mailed_at === null ? START : { at: Number(row.mailed_at), id: Number(row.mailed_seq) };
    return (await readMatches(store.db, intentId, mailed)).length > 0;
  }

  async function notify(intentIds: Iterable<string>): Promise<void> {
    const ids = [...new Set(intentIds)];
    if (ids.length === 0 || !options.onMatched) return;
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

  /** Hands the matches to `inTransaction` (doorbells queued atomically with the offers). */
  async function found(trx: Kysely<HolderTables>, matches: FoundMatches): Promise<FoundMatches> {
    if (matches.count > 0 && options.inTransaction) await options.inTransaction(trx, matches);
    return matches;
  }

  function caughtUpFailed(error: unknown): void {
    // The code only: the matches stay readable and the next catch-up or batch counts them.
    log.warn(
      { code: (error as { code?: unknown })?.code ?? "unknown" },
      "ringing for matches not counted yet failed; the next import or activation counts them",
    );
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
      const before = index;
      const loaded = await startLoad();
      // Intents activated while notifications were missed: what imports wrote meanwhile is rung.
      const joined: string[] = [];
      for (const id of index.ids()) if (!before.has(id)) joined.push(id);
      for (const id of joined) await refresh(id).catch((error: unknown) => caughtUpFailed(error));
      return loaded;
    },

    async onActivated(intentId) {
      await ready();
      const row = await store.db
        .selectFrom("holder_intents")
        .select([...FILTER_COLUMNS, "status", "matching_since", "updated_at"])
        .where("id", "=", intentId)
        .executeTakeFirst();
      index.remove(intentId);
      if (row === undefined || row.status !== "active") return { matched: 0 };
      const filter = intentFilter(row);
      if (filter === undefined) return { matched: 0 };
      index.add(filter);
      // In the index first, then the catch-up under the arrivals lock: a batch that matched
      // before the intent was there commits first and is counted here; every later batch counts
      // itself. Each subscription's doorbells count a match once (push/enqueue-matches.ts).
      const counted = await catchUp(intentId);
      remember(intentId, row.matching_since);
      // Told only when the criteria took effect with this change (activation, new criteria or
      // budget), not when another field changed: what a first read shows, at matching_since.
      const fresh = row.matching_since !== null && Number(row.matching_since) === Number(row.updated_at);
      const matched = fresh ? (await readMatches(store.db, intentId, START)).length : 0;
      if (matched > 0 || counted > 0) await notify([intentId]);
      return { matched };
    },

    onEnded(intentId) {
      index.remove(intentId);
      endedDuringLoad?.add(intentId);
    },

    refresh,

    async catchUpSince(startedAt) {
      try {
        await ready();
        const rows = await store.db
          .selectFrom("holder_intents")
          .select(["id", "matching_since"])
          .where("status", "=", "active")
          .where("matching_since", ">=", startedAt - CLOCK_SKEW_MS)
          .execute();
        for (const { id, matching_since } of rows) {
          if (followed.get(id) !== Number(matching_since)) await refresh(id);
        }
      } catch (error) {
        caughtUpFailed(error);
      }
    },

    matchOffer,

    newRound: () => ++rounds,

    async matchNewOffers(trx, offers, deliveredAt, round = ++rounds) {
      await ready();
      const byOffer: { offerId: string; intentIds: string[] }[] = [];
      const tally = { round, first: [] as string[] };
      let count = 0;
      const now = clock();
      for (const offer of offers) {
        if (offer.source.kind !== "catalogue") continue;
        const intentIds = index.match(offerFacts(offer), now, tally);
        if (intentIds.length === 0) continue;
        byOffer.push({ offerId: offer.id, intentIds });
        count += intentIds.length;
      }
      return found(trx, { deliveredAt, byOffer, count, firstInRound: tally.first });
    },

    async matchReply(trx, offer, intentId, deliveredAt) {
      const row = await trx
        .selectFrom("holder_intents")
        .select(FILTER_COLUMNS)
        .where("id", "=", intentId)
        .where("status", "=", "active")
        .executeTakeFirst();
      const filter = row ? intentFilter(row) : undefined;
      const fitting = filter !== undefined && fits(filter, offerFacts(offer), clock());
      return found(trx, single(intentId, fitting ? [offer.id] : [], deliveredAt));
    },

    notify,

    async listMatches(principal, id, since) {
      const intentId =
        options.readableIntent === undefined
          ? intentIdFor(principal, id)
          : await options.readableIntent(principal, id);
      let after = START;
      if (since !== undefined) {
        const parsed =
          typeof since === "string" && ISO_DATE_TIME.test(since) ? Date.parse(since) : Number.NaN;
        if (Number.isNaN(parsed)) {
          throw new HolderError(
            "ERR_HOLDER_INVALID",
            'since must be an ISO 8601 date-time with a time zone, e.g. "2026-11-30T12:00:00.000Z" (a deliveredAt from an earlier answer)',
          );
        }
        // Strictly after `since`: every match delivered at that instant was in the earlier answer.
        after = { at: parsed, id: Number.POSITIVE_INFINITY };
      }
      return pageOf(await readMatches(store.db, intentId, after, (query) => store.read(query)));
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

/**
 * A page holds at most LIST_MATCHES_MAX matches, extended by every match sharing the last one's
 * deliveredAt, so that `since = last deliveredAt` never skips a match; `more` says another call
 * with that `since` has more.
 */
function pageOf(all: readonly ReadMatch[]): { matches: Match[]; more?: boolean } {
  let end = Math.min(all.length, LIST_MATCHES_MAX);
  const last = all[end - 1];
  while (last !== undefined && end < all.length && all[end]?.deliveredAt === last.deliveredAt) end++;
  const matches = all.slice(0, end).map(({ offer, deliveredAt }) => ({
    offer,
    deliveredAt: new Date(deliveredAt).toISOString(),
  }));
  return end < all.length ? { matches, more: true } : { matches };
}
