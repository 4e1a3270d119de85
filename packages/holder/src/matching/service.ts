import type { Kysely } from "@doorbell/store";
import type { HolderContext } from "../context.js";
import type { FoundMatches, MatchService } from "../model/services.js";
import type { HolderTables } from "../model/tables.js";
import type { Offer } from "../model/types.js";
import { onActivated, onEnded, refresh } from "./activation.js";
import { matchNewOffers, matchOffer, matchReply, notify } from "./arrival.js";
import { catchUpSince, reload } from "./background.js";
import { listMatches } from "./listing.js";
import { ready } from "./load.js";
import type { MatchableOffer } from "./rule.js";
import { type MatchingOptions, matchingState } from "./state.js";

export type { FoundMatches } from "../model/services.js";
export { LIST_MATCHES_MAX } from "./listing.js";
export { CLOCK_SKEW_MS, FILTER_COLUMNS, type MatchingOptions } from "./state.js";

/**
 * Matching: an in-memory index of the active intents (loaded from holder_intents at start, kept
 * current through `onActivated` / `onEnded`), used to find the intents a new offer fits — so that
 * they are told (e-mail digest, doorbells, Events). Matches themselves are not stored: reading them
 * applies the same rule to the offers in the database (reader.ts), so the database stays the
 * authority and an index that is a little behind can only delay a notification, never deliver a
 * match to a withdrawn, expired or draft intent.
 *
 * One module per operation, over the state they share (state.ts): loading the index (load.ts),
 * offers arriving (arrival.ts), intents joining and leaving (activation.ts), catching up on what
 * this process missed (background.ts), and reading an intent's matches (listing.ts).
 */

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
   * Another process activated, changed or ended this intent (several processes on one database): the index follows the
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

export function createMatchingService(ctx: HolderContext, options: MatchingOptions = {}): MatchingService {
  const state = matchingState(ctx, options);
  return {
    get activeIntents() {
      return state.index.size;
    },
    async start() {
      await ready(state);
      return { activeIntents: state.index.size };
    },
    reload: () => reload(state),
    onActivated: (intentId) => onActivated(state, intentId),
    onEnded: (intentId) => onEnded(state, intentId),
    refresh: (intentId) => refresh(state, intentId),
    catchUpSince: (startedAt) => catchUpSince(state, startedAt),
    matchOffer: (offer) => matchOffer(state, offer),
    newRound: () => ++state.rounds,
    matchNewOffers: (trx, offers, deliveredAt, round) =>
      matchNewOffers(state, trx, offers, deliveredAt, round),
    matchReply: (trx, offer, intentId, deliveredAt) => matchReply(state, trx, offer, intentId, deliveredAt),
    notify: (intentIds) => notify(state, intentIds),
    listMatches: (principal, id, since) => listMatches(state, principal, id, since),
  };
}
