import type { Kysely } from "@doorbell/store";
import type { FoundMatches } from "../model/services.js";
import type { HolderTables } from "../model/tables.js";
import { HolderError, type Offer } from "../model/types.js";
import { ready } from "./load.js";
import { fits, intentFilter, type MatchableOffer, offerFacts } from "./rule.js";
import { errorCode, FILTER_COLUMNS, type MatchingState } from "./state.js";

/**
 * Offers arrive: new or changed catalogue offers are matched against the index, a reply against
 * the one intent it answers, inside the transaction that writes them; `notify` tells the intents
 * after the commit.
 */

/** The ids of the indexed active intents `offer` fits now. Throws before the first load. */
export function matchOffer(state: MatchingState, offer: MatchableOffer): string[] {
  if (!state.loaded)
    throw new HolderError("ERR_HOLDER_CONFLICT", "matching has not loaded the active intents yet");
  return state.index.match(offerFacts(offer), state.clock());
}

export async function matchNewOffers(
  state: MatchingState,
  trx: Kysely<HolderTables>,
  offers: readonly Offer[],
  deliveredAt: number,
  round = ++state.rounds,
): Promise<FoundMatches> {
  await ready(state);
  const tally = { round, batch: ++state.rounds, first: [] as string[], inBatch: [] as string[] };
  let count = 0;
  const now = state.clock();
  for (const offer of offers) {
    if (offer.source.kind === "catalogue") count += state.index.tally(offerFacts(offer), now, tally);
  }
  return found(state, trx, { deliveredAt, count, intents: tally.inBatch, firstInRound: tally.first });
}

export async function matchReply(
  state: MatchingState,
  trx: Kysely<HolderTables>,
  offer: Offer,
  intentId: string,
  deliveredAt: number,
): Promise<FoundMatches> {
  const row = await trx
    .selectFrom("holder_intents")
    .select(FILTER_COLUMNS)
    .where("id", "=", intentId)
    .where("status", "=", "active")
    .executeTakeFirst();
  const filter = row ? intentFilter(row) : undefined;
  const fitting = filter !== undefined && fits(filter, offerFacts(offer), state.clock());
  const intents = fitting ? [intentId] : [];
  return found(state, trx, { deliveredAt, count: intents.length, intents, firstInRound: intents });
}

/** Calls `onMatched` with the intents that got new matches (after the commit); never throws. */
export async function notify(state: MatchingState, intentIds: Iterable<string>): Promise<void> {
  const { options } = state;
  // Nobody to tell: an import's million intents are not gathered into a set for nothing.
  if (!options.onMatched) return;
  const ids = [...new Set(intentIds)];
  if (ids.length === 0) return;
  try {
    await options.onMatched(ids);
  } catch (error) {
    // Never the ids or the error text (it may quote data): the code and the count only.
    state.log.warn(
      { code: errorCode(error), intents: ids.length },
      "onMatched failed; the matches are recorded and wait for the next digest",
    );
  }
}

/** Hands the matches to the sink (doorbells queued atomically with the offers). */
async function found(
  state: MatchingState,
  trx: Kysely<HolderTables>,
  matches: FoundMatches,
): Promise<FoundMatches> {
  const { options } = state;
  if (matches.count > 0 && options.sink) await options.sink.enqueueMatches(trx, matches);
  return matches;
}
