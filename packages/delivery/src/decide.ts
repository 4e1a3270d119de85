import type { DeadLetterReason } from "./attempt-log.js";
import type { ChannelPolicy } from "./policy.js";
import { nextAttemptAt } from "./retry.js";

/**
 * What one attempt did to the queue: go on with the next row, or stop for now. `gone`: delivered,
 * but the queue was removed meanwhile (the subscription ended), so stop. `retry_later`: a queue
 * ("queue" order) waits for this row; a channel of "each" order goes on with the next.
 */
export type AttemptOutcome = "delivered" | "gone" | "dropped" | "retry_later" | "stopped";

/** What a failed attempt does to its event (its I/O is in attempt.ts). */
export type EventAction =
  /** Sent again at `at`; the row keeps its webhook-id and body. */
  | {
      readonly kind: "retry";
      readonly at: number;
      readonly attempts: number;
      readonly firstAttemptAt: number;
    }
  /** Removed without retry: a non-retryable answer (dead-lettered), or a final row (never retried). */
  | { readonly kind: "drop"; readonly deadLetter: "too-large" | "gone" | null }
  /** Retries exhausted: dead-lettered and removed; the others go on. */
  | { readonly kind: "give-up" }
  /** The subscription ends; the event is dead-lettered first. */
  | {
      readonly kind: "end";
      readonly reason: "gone" | "delivery-failed";
      readonly deadLetter: DeadLetterReason;
    };

/** Attempts failed with no success in between: since when, and how many (this one included). */
export interface FailureStreak {
  readonly failedSince: number;
  readonly failures: number;
}

export type Decision = EventAction & {
  /** Delivery is suspended until the next refresh (the event's own action still applies). */
  readonly suspend: boolean;
  /** deliveryStatus after this failure. */
  readonly streak: FailureStreak;
};

export interface FailedAttempt {
  readonly row: { attempts: number; first_attempt_at: number | null; final: number };
  /** The HTTP status, when an answer came; a Retry-After it carried. */
  readonly answer: { status?: number | undefined; retryAfterSeconds?: number | undefined };
  /** When the attempt was sent. */
  readonly sentAt: number;
  /** When its failure was known. */
  readonly now: number;
  /** Uniform in [0, 1), for jitter. */
  readonly random: () => number;
  /** The failures before this one; failedSince null when the last attempt succeeded. */
  readonly before: { failedSince: number | null; failures: number };
}

/** The decision for one failed attempt: pure, so every channel's rules read as one table (decide.test.ts). */
export function decideFailure(policy: ChannelPolicy, failed: FailedAttempt): Decision {
  const streak: FailureStreak = {
    failedSince: failed.before.failedSince ?? failed.now,
    failures: failed.before.failures + 1,
  };
  const action = eventAction(policy, failed);
  const rule = policy.suspend;
  const suspend =
    rule !== undefined &&
    action.kind !== "end" &&
    streak.failures >= rule.afterFailures &&
    failed.now - streak.failedSince >= rule.afterMs;
  return { ...action, suspend, streak };
}

function eventAction(policy: ChannelPolicy, failed: FailedAttempt): EventAction {
  const { row, answer } = failed;
  // Sent once after the end, best effort (push profile §6 rule 7).
  if (row.final === 1) return { kind: "drop", deadLetter: null };
  if (answer.status === 413 && policy.onTooLarge === "drop") return { kind: "drop", deadLetter: "too-large" };
  if (answer.status === 410) {
    return policy.onGone === "drop"
      ? { kind: "drop", deadLetter: "gone" }
      : { kind: "end", reason: "gone", deadLetter: "gone" };
  }
  const attempts = row.attempts + 1;
  const firstAttemptAt = row.first_attempt_at ?? failed.sentAt;
  const at = nextAttemptAt(policy.retry, {
    attempts,
    firstAttemptAt,
    now: failed.now,
    random: failed.random,
    ...(answer.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: answer.retryAfterSeconds }),
  });
  if (at !== undefined) return { kind: "retry", at, attempts, firstAttemptAt };
  return policy.onExhausted === "end"
    ? { kind: "end", reason: "delivery-failed", deadLetter: "retries-exhausted" }
    : { kind: "give-up" };
}

/**
 * Everything a failed attempt writes and answers, derived from its decision: attempt.ts only
 * carries it out. `row`: the outbox row is updated for its retry, deleted, or left to the end of
 * the subscription (which removes the whole queue).
 */
export interface FailurePlan {
  readonly decision: Decision;
  readonly row: "retry" | "delete" | "keep";
  readonly deadLetter: DeadLetterReason | null;
  /** Whether the worker goes on with the next row. */
  readonly outcome: AttemptOutcome;
}

/** The plan for one failed attempt of `policy`'s channel: pure, like `decideFailure`. */
export function planFailure(policy: ChannelPolicy, failed: FailedAttempt): FailurePlan {
  const decision = decideFailure(policy, failed);
  return {
    decision,
    row: decision.kind === "retry" ? "retry" : decision.kind === "end" ? "keep" : "delete",
    deadLetter: deadLetterReason(decision),
    outcome: failedOutcome(decision),
  };
}

function deadLetterReason(decision: Decision): DeadLetterReason | null {
  switch (decision.kind) {
    case "retry":
      return null;
    case "drop":
      return decision.deadLetter;
    case "give-up":
      return "retries-exhausted";
    case "end":
      return decision.deadLetter;
  }
}

function failedOutcome(decision: Decision): AttemptOutcome {
  if (decision.kind === "end" || decision.suspend) return "stopped";
  if (decision.kind === "retry") return "retry_later";
  // A final row failed: the next ones are sent on a later pass, as before.
  return decision.kind === "drop" && decision.deadLetter === null ? "stopped" : "dropped";
}
