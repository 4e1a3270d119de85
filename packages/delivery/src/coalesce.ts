import { type Kysely, sql } from "@doorbell/store";
import { DeliveryError } from "./errors.js";
import type { DeliveryTables } from "./schema.js";

/**
 * Push profile §6 rule 6: at most one coalesced doorbell per subscription per 15 minutes, adding
 * up the counts of the events it stands for, and at most 24 a day. A holder may lower the numbers,
 * never raise them.
 */
export interface CoalescingLimits {
  /** Minimum time between two matches doorbells of one subscription. */
  readonly windowMs: number;
  /** Matches doorbells per subscription per 24 hours. */
  readonly dailyCap: number;
}

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
  report: { count: number; latest: string },
): { count: number; latest: string } {
  const latest =
    waiting.latest !== null && Date.parse(waiting.latest) > Date.parse(report.latest)
      ? waiting.latest
      : report.latest;
  return { count: waiting.count + report.count, latest };
}

/**
 * The one event type of the push channel that is added up while its window is closed and sent as
 * one doorbell, as its caller defines it (the holder: the push profile's matches doorbell). The
 * engine keeps only a count and the latest time, read from the fields the caller names; the caller
 * builds the body of the doorbell that stands for them.
 */
export interface CoalescedEvent {
  /** Its type; events of other types are queued as they come. */
  readonly event: string;
  /** The field of each event's data that it adds: a positive integer count. */
  readonly count: string;
  /** The field of each event's data with the time of its latest item (ISO 8601): the latest is kept. */
  readonly latest: string;
  /** The `data` of the doorbell sent for what was added up, at `timestamp` (its envelope's). */
  body(state: CoalescedState): Record<string, unknown>;
  /**
   * The subscriptions among `subscriptionIds` that may carry this event, read in the transaction
   * that queues it or builds its doorbell (the holder: those the person allowed, never a test
   * call's). For the others it is dropped, whichever path queued it. Without it, every one may.
   */
  carriers?(db: Kysely<DeliveryTables>, subscriptionIds: readonly string[]): Promise<ReadonlySet<string>>;
}

export interface CoalescedState {
  /** The subscription as its subscriber knows it. */
  subscriberId: string;
  count: number;
  latest: string | null;
  timestamp: string;
}

/** Checks a caller's coalesced event once, when the engine is created. */
export function checkedCoalescedEvent(event: CoalescedEvent): CoalescedEvent {
  // Compiled into the outbox queries as a literal (see `queuedCoalescedType`).
  if (!/^[\w.:-]{1,200}$/.test(event.event)) {
    throw new DeliveryError(
      "ERR_DELIVERY_CONFIG",
      "a coalesced event type is 1–200 letters, digits, '.', ':', '-' or '_'",
    );
  }
  return event;
}

/** The subscriptions among `ids` that may carry the coalesced event (see `carriers`). */
export async function coalescedCarriers(
  coalesced: CoalescedEvent,
  db: Kysely<DeliveryTables>,
  ids: readonly string[],
): Promise<ReadonlySet<string>> {
  if (coalesced.carriers === undefined) return new Set(ids);
  if (ids.length === 0) return new Set();
  return coalesced.carriers(db, ids);
}

/** One event's report, checked: the engine adds it to the subscription's waiting aggregate. */
export function coalescedReport(
  coalesced: CoalescedEvent,
  data: Record<string, unknown>,
): { count: number; latest: string } {
  const count = data[coalesced.count];
  const latest = data[coalesced.latest];
  if (!Number.isSafeInteger(count) || (count as number) < 1) {
    throw new DeliveryError("ERR_DELIVERY_INVALID_EVENT", `${coalesced.count} must be a positive integer`);
  }
  if (typeof latest !== "string" || Number.isNaN(Date.parse(latest))) {
    throw new DeliveryError("ERR_DELIVERY_INVALID_EVENT", `${coalesced.latest} must be a date-time`);
  }
  return { count: count as number, latest };
}

type Literal = ReturnType<typeof sql.lit<string>>;
const queuedTypes = new WeakMap<CoalescedEvent, Literal>();

/**
 * The coalesced type as an SQL literal, for queries on the outbox's queued coalesced doorbells:
 * a partial index (schema.ts) is used only by queries that name the type literally, not as a
 * parameter. Undefined when nothing coalesces.
 */
export function queuedCoalescedType(coalesced: CoalescedEvent | undefined): Literal | undefined {
  if (coalesced === undefined) return undefined;
  let literal = queuedTypes.get(coalesced);
  if (!literal) {
    literal = sql.lit(coalesced.event);
    queuedTypes.set(coalesced, literal);
  }
  return literal;
}
