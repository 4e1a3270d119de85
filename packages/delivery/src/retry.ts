/**
 * When to try again. The delays follow the Standard Webhooks example schedule (5 s, 5 min, 30 min,
 * 2 h, 5 h, 10 h, 14 h, 20 h, 24 h between attempts), cut at a horizon of 24 hours after the first
 * attempt (push profile §6 rule 5), with a last attempt exactly at the horizon.
 */
export interface RetryPolicy {
  /** Delay before retry n (n = 1, 2, …), in ms. */
  readonly delaysMs: readonly number[];
  /** No attempt later than this after the first one. */
  readonly horizonMs: number;
  /** Each delay is scaled by a uniform factor in [1 − jitter, 1 + jitter]. */
  readonly jitter: number;
  /** A Retry-After longer than the delay is honoured up to max(2 × delay, this). */
  readonly retryAfterCapMs: number;
}

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

export const STANDARD_WEBHOOKS_DELAYS_MS: readonly number[] = [
  5 * SECOND,
  5 * MINUTE,
  30 * MINUTE,
  2 * HOUR,
  5 * HOUR,
  10 * HOUR,
  14 * HOUR,
  20 * HOUR,
  24 * HOUR,
];

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  delaysMs: STANDARD_WEBHOOKS_DELAYS_MS,
  horizonMs: 24 * HOUR,
  jitter: 0.1,
  retryAfterCapMs: MINUTE,
};

/**
 * MCP Events webhooks: each event is retried on its own, a few times within minutes (the sketch's
 * "Delivery model": bounded retries with backoff), 1 s, 5 s, 30 s and 2 min apart, so one refused
 * event is given up within minutes and its cursor stops holding back the others.
 */
export const EVENTS_RETRY_POLICY: RetryPolicy = {
  delaysMs: [1 * SECOND, 5 * SECOND, 30 * SECOND, 2 * MINUTE],
  horizonMs: 5 * MINUTE,
  jitter: 0.1,
  retryAfterCapMs: MINUTE,
};

export interface RetryInput {
  /** Attempts made so far, including the one that just failed (≥ 1). */
  attempts: number;
  firstAttemptAt: number;
  now: number;
  /** From the endpoint's Retry-After, if it sent one. */
  retryAfterSeconds?: number;
  /** Uniform in [0, 1). */
  random: () => number;
}

/** The time of the next attempt, or `undefined` when retries are exhausted. */
export function nextAttemptAt(policy: RetryPolicy, input: RetryInput): number | undefined {
  const base = policy.delaysMs[input.attempts - 1];
  const horizon = input.firstAttemptAt + policy.horizonMs;
  if (base === undefined || input.now >= horizon) return undefined;
  let delay = base * (1 + (input.random() * 2 - 1) * policy.jitter);
  if (input.retryAfterSeconds !== undefined) {
    const asked = input.retryAfterSeconds * SECOND;
    // Only ever later than the schedule, and never so late that one answer can park us for a day.
    if (asked > delay) delay = Math.min(asked, Math.max(2 * base, policy.retryAfterCapMs));
  }
  return Math.min(Math.round(input.now + delay), horizon);
}
