import type { HolderContext } from "../context.js";
import type { MatchSink } from "../model/services.js";
import type { Principal } from "../model/types.js";
import { IntentIndex } from "./intent-index.js";

/**
 * What the matching service's operations share (one per service): the index this process holds,
 * how far loading it has come, and which intents it followed lately. The operations are
 * module-level functions over this state, so each lives in the module of its operation.
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
   * Where matches go inside the transactions that make them (the push profile's doorbells):
   * `enqueueMatches` in the one that commits the offers, so no match exists without its outbox
   * rows; `catchUpMatches` in one that holds the arrivals lock, after an intent joined this
   * process's index. Matching knows nothing else of push.
   */
  sink?: MatchSink;
  /** Rows per page when loading active intents at start (default 10,000). */
  loadPageSize?: number;
}

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

/** How far apart the clocks of processes sharing one database may be (see catchUpSince). */
export const CLOCK_SKEW_MS = 60_000;
/** How long a followed intent is remembered (see `followed`): imports longer than this re-check. */
const FOLLOWED_KEPT_MS = 60 * 60_000;

export interface MatchingState {
  readonly store: HolderContext["store"];
  readonly clock: HolderContext["clock"];
  readonly log: HolderContext["log"];
  readonly options: MatchingOptions;
  readonly pageSize: number;
  index: IntentIndex;
  loading: Promise<{ activeIntents: number }> | undefined;
  loaded: boolean;
  /** Rounds of `matchNewOffers`, counted here so that a reloaded index never sees one twice. */
  rounds: number;
  /** Intents ended while a load was reading pages: taken out of the new index when it takes over. */
  endedDuringLoad: Set<string> | undefined;
  /**
   * The criteria (matching_since) this process last followed and caught up for each intent,
   * lately: catchUpSince skips those (a catch-up after they joined the index already counted
   * everything). Oldest first; entries older than FOLLOWED_KEPT_MS are dropped.
   */
  readonly followed: Map<string, number>;
}

export function matchingState(ctx: HolderContext, options: MatchingOptions): MatchingState {
  const { store, clock, log } = ctx;
  return {
    store,
    clock,
    log,
    options,
    pageSize: options.loadPageSize ?? 10_000,
    index: new IntentIndex(),
    loading: undefined,
    loaded: false,
    rounds: 0,
    endedDuringLoad: undefined,
    followed: new Map(),
  };
}

/** Notes that this process followed and caught up `intentId` at criteria `since`. */
export function remember(state: MatchingState, intentId: string, since: number | null): void {
  if (since === null) return;
  const { followed } = state;
  followed.delete(intentId);
  followed.set(intentId, Number(since));
  const old = state.clock() - FOLLOWED_KEPT_MS;
  for (const [id, at] of followed) {
    if (at >= old) break;
    followed.delete(id);
  }
}

/** The code only, never the ids or the error text (it may quote data). */
export function errorCode(error: unknown): unknown {
  return (error as { code?: unknown })?.code ?? "unknown";
}
