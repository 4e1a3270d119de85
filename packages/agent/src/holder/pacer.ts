/**
 * Push profile §8.2 in the client: an intent is not read more often than once per 15 minutes, and
 * not before the holder's nextCheckAfter. A read before the allowed time is refused
 * (ERR_AGENT_PULL_TOO_EARLY with `retryAt`), never silently delayed: the caller decides whether to
 * wait, and a program that waits sees why.
 *
 * A verified doorbell (intent.matches.delivered) grants one read at once: it is the holder saying
 * new matches are there, not a poll, and the holder already sends at most one per 15 minutes
 * (§6 rule 6). Grants do not add up.
 */
import { type Clock, HOUR, MINUTE } from "../clock.js";
import { AgentError } from "../errors.js";

export const MIN_PULL_INTERVAL_MS = 15 * MINUTE;
/** A nextCheckAfter further away than this is taken as this: a holder's mistake must not silence an agent for months. */
export const MAX_NEXT_CHECK_AFTER_MS = 24 * HOUR;

export interface PaceState {
  lastReadAt?: number;
  nextCheckAfter?: number;
  granted?: boolean;
}

export class PullPacer {
  readonly #clock: Clock;
  readonly #minIntervalMs: number;
  readonly #slots = new Map<string, PaceState>();

  constructor(clock: Clock, minIntervalMs = MIN_PULL_INTERVAL_MS) {
    if (!(minIntervalMs >= MIN_PULL_INTERVAL_MS)) {
      throw new AgentError(
        "ERR_AGENT_INVALID_ARGUMENT",
        `the pull interval must be at least 15 minutes (push profile §8.2), not ${minIntervalMs} ms`,
      );
    }
    this.#clock = clock;
    this.#minIntervalMs = minIntervalMs;
  }

  /** The first instant `key` may be read (now or earlier when it may be read at once). */
  allowedAt(key: string): number {
    const slot = this.#slots.get(key);
    if (slot === undefined || slot.granted) return this.#clock();
    const floor = slot.lastReadAt === undefined ? 0 : slot.lastReadAt + this.#minIntervalMs;
    const hint =
      slot.nextCheckAfter === undefined || slot.lastReadAt === undefined
        ? 0
        : Math.min(slot.nextCheckAfter, slot.lastReadAt + MAX_NEXT_CHECK_AFTER_MS);
    return Math.max(floor, hint);
  }

  /** Takes the read slot of `key` now, or refuses with the instant it opens. */
  take(key: string, what = "this intent"): void {
    const now = this.#clock();
    const at = this.allowedAt(key);
    if (at > now) {
      throw new AgentError(
        "ERR_AGENT_PULL_TOO_EARLY",
        `${what} was read at most 15 minutes ago or the holder asked to wait (nextCheckAfter); ` +
          `the next read is allowed at ${new Date(at).toISOString()} (push profile §8.2)`,
        { retryAt: at },
      );
    }
    this.#slots.set(key, { lastReadAt: now });
  }

  /** The holder's nextCheckAfter from the answer of the read just taken. */
  noteNextCheckAfter(key: string, at: number | undefined): void {
    const slot = this.#slots.get(key);
    if (slot !== undefined && at !== undefined && Number.isFinite(at)) slot.nextCheckAfter = at;
  }

  /** A verified doorbell said there are new matches: one read may happen now. */
  grant(key: string): void {
    this.#slots.set(key, { ...this.#slots.get(key), granted: true });
  }

  /** What to persist, so a restart does not read again early. */
  state(key: string): PaceState | undefined {
    const slot = this.#slots.get(key);
    return slot === undefined ? undefined : { ...slot };
  }

  restore(key: string, state: PaceState | undefined): void {
    if (state === undefined) this.#slots.delete(key);
    else this.#slots.set(key, { ...state });
  }
}
