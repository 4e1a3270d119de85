import type { Match, Principal } from "../model/types.js";
import { HolderError } from "../model/types.js";
import { type ReadMatch, readMatches, START } from "./reader.js";
import type { MatchingState } from "./state.js";

/** listMatches: an intent's matches read from the database, a page at a time. */

/** Matches returned by one listMatches call (plus any sharing the last one's deliveredAt). */
export const LIST_MATCHES_MAX = 1_000;

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

export async function listMatches(
  state: MatchingState,
  principal: Principal,
  id: string | undefined,
  since: string | undefined,
): Promise<{ matches: Match[]; more?: boolean }> {
  const { options, store } = state;
  const intentId =
    options.readableIntent === undefined
      ? intentIdFor(principal, id)
      : await options.readableIntent(principal, id);
  let after = START;
  if (since !== undefined) {
    const parsed = typeof since === "string" && ISO_DATE_TIME.test(since) ? Date.parse(since) : Number.NaN;
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
