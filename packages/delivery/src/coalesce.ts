import { sql } from "@doorbell/store";

/**
 * Push profile §6 rule 6: at most one `intent.matches.delivered` per subscription per 15 minutes,
 * adding up `newMatches`, and at most 24 a day. A holder may lower the numbers, never raise them.
 */
export interface CoalescingLimits {
  /** Minimum time between two matches doorbells of one subscription. */
  readonly windowMs: number;
  /** Matches doorbells per subscription per 24 hours. */
  readonly dailyCap: number;
}

export const MATCHES_EVENT = "intent.matches.delivered";
/**
 * MATCHES_EVENT as an SQL literal, for queries on the outbox's queued matches doorbells: its
 * partial index (schema.ts) is used only by queries that name the type literally, not as a parameter.
 */
export const QUEUED_MATCHES_TYPE = sql.lit(MATCHES_EVENT);
const DAY_MS = 24 * 60 * 60 * 1000;
export const PROFILE_LIMITS: CoalescingLimits = { windowMs: 15 * 60 * 1000, dailyCap: 24 };

/** Checks configured limits against the profile: a longer window and a smaller cap are allowed. */
export function coalescingLimits(limits: Partial<CoalescingLimits> = {}): CoalescingLimits {
  const windowMs = limits.windowMs ?? PROFILE_LIMITS.windowMs;
  const dailyCap = limits.dailyCap ?? PROFILE_LIMITS.dailyCap;
  if (!(windowMs >= PROFILE_LIMITS.windowMs)) {
    throw new RangeError(
      `the coalescing window may only be raised above 15 minutes, not set to ${windowMs} ms`,
    );
  }
  if (!(Number.isInteger(dailyCap) && dailyCap >= 1 && dailyCap <= PROFILE_LIMITS.dailyCap)) {
    throw new RangeError(`the daily cap is 1–24 matches doorbells, not ${dailyCap}`);
  }
  return { windowMs, dailyCap };
}

export interface MatchesWindow {
  matches_last_sent_at: number | null;
  matches_day_start: number | null;
  matches_day_count: number;
}

/** The earliest time the next matches doorbell may be queued. */
export function matchesOpenAt(limits: CoalescingLimits, state: MatchesWindow): number {
  let open = state.matches_last_sent_at === null ? 0 : state.matches_last_sent_at + limits.windowMs;
  if (state.matches_day_start !== null && state.matches_day_count >= limits.dailyCap) {
    open = Math.max(open, state.matches_day_start + DAY_MS);
  }
  return open;
}

/** The day counter after queuing one more matches doorbell at `now`. */
export function countMatchesDoorbell(
  state: MatchesWindow,
  now: number,
): Pick<MatchesWindow, "matches_day_start" | "matches_day_count"> {
  if (state.matches_day_start === null || now >= state.matches_day_start + DAY_MS) {
    return { matches_day_start: now, matches_day_count: 1 };
  }
  return { matches_day_start: state.matches_day_start, matches_day_count: state.matches_day_count + 1 };
}

/** Adds a new report to the waiting aggregate: sum the counts, keep the latest time. */
export function mergeMatches(
  waiting: { count: number; latest: string | null },
  report: { newMatches: number; latestDeliveredAt: string },
): { count: number; latest: string } {
  const latest =
    waiting.latest !== null && Date.parse(waiting.latest) > Date.parse(report.latestDeliveredAt)
      ? waiting.latest
      : report.latestDeliveredAt;
  return { count: waiting.count + report.newMatches, latest };
}
