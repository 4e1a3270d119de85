import { describe, expect, it } from "vitest";
import { withoutCursor } from "../src/channels.js";
import { type Decision, decideFailure, type FailedAttempt, planFailure } from "../src/decide.js";
import { channelPolicies } from "../src/policy.js";
import { HOUR, MINUTE, T0 } from "./harness.js";

// What one failed attempt does, per channel: the push profile (§6 rule 5: a queue, 413 retried,
// 410 and exhausted retries end the subscription) and MCP Events (each event retried on its own
// within minutes, 410/413 drop it, exhausted retries give it up, sustained failures suspend).
const SECOND = 1000;
const policies = channelPolicies({});
const NOW = T0;

interface Case {
  attempts?: number;
  firstAttemptAt?: number | null;
  final?: boolean;
  /** null: no answer came (a timeout, a refused connection). */
  status?: number | null;
  retryAfterSeconds?: number;
  /** The failures before this one: since when (null after a success) and how many. */
  before?: [failedSince: number | null, failures: number];
}

function failedAttempt(c: Case): FailedAttempt {
  return {
    row: {
      attempts: c.attempts ?? 0,
      first_attempt_at:
        c.firstAttemptAt === undefined ? (c.attempts ? NOW - MINUTE : null) : c.firstAttemptAt,
      final: c.final ? 1 : 0,
    },
    answer: {
      status: c.status === null ? undefined : (c.status ?? 500),
      retryAfterSeconds: c.retryAfterSeconds,
    },
    sentAt: NOW,
    now: NOW,
    random: () => 0.5, // no jitter
    before: { failedSince: c.before?.[0] ?? null, failures: c.before?.[1] ?? 0 },
  };
}

function decide(channel: "push" | "mcp" | "mcp-standard", c: Case): Decision {
  return decideFailure(policies[channel], failedAttempt(c));
}

/** A decision in words, times relative to now: "retry +1s", "end gone, dead letter gone", "… + suspend". */
function words(d: Decision): string {
  let text: string;
  switch (d.kind) {
    case "retry":
      text = `retry +${(d.at - NOW) / SECOND}s`;
      break;
    case "drop":
      text = d.deadLetter === null ? "drop" : `drop, dead letter ${d.deadLetter}`;
      break;
    case "give-up":
      text = "give up, dead letter retries-exhausted";
      break;
    case "end":
      text = `end ${d.reason}, dead letter ${d.deadLetter}`;
      break;
  }
  return d.suspend ? `${text} + suspend` : text;
}

describe("decideFailure", () => {
  it.each<[string, "push" | "mcp" | "mcp-standard", Case, string]>([
    ["push: a 500 is retried on the Standard Webhooks schedule", "push", {}, "retry +5s"],
    ["push: the second retry is 5 min later", "push", { attempts: 1 }, "retry +300s"],
    ["push: a 413 is retried like any answer other than 2xx", "push", { status: 413 }, "retry +5s"],
    ["push: a connection failure (no status) is retried", "push", { status: null }, "retry +5s"],
    ["push: Retry-After moves the retry later", "push", { status: 503, retryAfterSeconds: 45 }, "retry +45s"],
    ["push: 410 ends the subscription", "push", { status: 410 }, "end gone, dead letter gone"],
    [
      "push: at the 24 h horizon the subscription ends",
      "push",
      { attempts: 7, firstAttemptAt: NOW - 24 * HOUR },
      "end delivery-failed, dead letter retries-exhausted",
    ],
    ["push: a final row is sent once, never retried", "push", { final: true }, "drop"],
    ["push: never suspends, however long it fails", "push", { before: [NOW - 20 * HOUR, 500] }, "retry +5s"],
    ["mcp: a 500 is retried after 1 s", "mcp", {}, "retry +1s"],
    ["mcp: then after 5 s", "mcp", { attempts: 1 }, "retry +5s"],
    ["mcp: then after 30 s", "mcp", { attempts: 2 }, "retry +30s"],
    ["mcp: then after 2 min", "mcp", { attempts: 3 }, "retry +120s"],
    [
      "mcp: the fifth failed attempt gives the event up, the subscription stays",
      "mcp",
      { attempts: 4 },
      "give up, dead letter retries-exhausted",
    ],
    [
      "mcp: past the 5 min horizon the event is given up",
      "mcp",
      { attempts: 2, firstAttemptAt: NOW - 5 * MINUTE },
      "give up, dead letter retries-exhausted",
    ],
    ["mcp: Retry-After moves the retry later", "mcp", { status: 429, retryAfterSeconds: 45 }, "retry +45s"],
    ["mcp: 413 drops that event", "mcp", { status: 413 }, "drop, dead letter too-large"],
    [
      "mcp: 410 drops that event and keeps the subscription",
      "mcp",
      { status: 410 },
      "drop, dead letter gone",
    ],
    ["mcp-standard follows the same rules: 410", "mcp-standard", { status: 410 }, "drop, dead letter gone"],
    ["mcp-standard: exhausted", "mcp-standard", { attempts: 4 }, "give up, dead letter retries-exhausted"],
    [
      "mcp: the tenth failure after 10 min without a success suspends (the event keeps its retry)",
      "mcp",
      { before: [NOW - 10 * MINUTE, 9] },
      "retry +1s + suspend",
    ],
    [
      "mcp: ten failures within less than 10 min do not suspend",
      "mcp",
      { before: [NOW - 10 * MINUTE + 1, 9] },
      "retry +1s",
    ],
    [
      "mcp: an hour of failures, but only nine of them, does not suspend",
      "mcp",
      { before: [NOW - HOUR, 8] },
      "retry +1s",
    ],
    [
      "mcp: an exhausted event past the threshold is given up and delivery suspended",
      "mcp",
      { attempts: 4, before: [NOW - 20 * MINUTE, 30] },
      "give up, dead letter retries-exhausted + suspend",
    ],
    [
      "mcp: a dropped event past the threshold suspends too",
      "mcp",
      { status: 413, before: [NOW - 20 * MINUTE, 30] },
      "drop, dead letter too-large + suspend",
    ],
    ["mcp: after a success the count starts again", "mcp", { attempts: 3, before: [null, 0] }, "retry +120s"],
  ])("%s", (_, channel, c, expected) => {
    expect(words(decide(channel, c))).toBe(expected);
  });

  it("counts the streak: failedSince is kept, or starts now after a success", () => {
    expect(decide("mcp", { before: [NOW - MINUTE, 4] }).streak).toEqual({
      failedSince: NOW - MINUTE,
      failures: 5,
    });
    expect(decide("mcp", { before: [null, 0] }).streak).toEqual({ failedSince: NOW, failures: 1 });
    expect(decide("push", { before: [null, 0] }).streak).toEqual({ failedSince: NOW, failures: 1 });
  });

  it("a retry keeps the first attempt's time and counts the attempt", () => {
    const first = decide("mcp", {});
    expect(first).toMatchObject({ kind: "retry", attempts: 1, firstAttemptAt: NOW });
    const later = decide("mcp", { attempts: 2, firstAttemptAt: NOW - 6 * SECOND });
    expect(later).toMatchObject({ kind: "retry", attempts: 3, firstAttemptAt: NOW - 6 * SECOND });
  });

  it("the events options change the MCP channels only; retry and challengeDelaysMs stay push's", () => {
    const custom = channelPolicies({
      retry: { delaysMs: [7 * SECOND], horizonMs: HOUR, jitter: 0, retryAfterCapMs: MINUTE },
      challengeDelaysMs: [1, 2],
      events: { suspendAfterMs: 0, suspendAfterFailures: 2, challengeDelaysMs: [3, 4] },
    });
    expect(custom.push).toMatchObject({ order: "queue", challengeDelaysMs: [1, 2], suspend: undefined });
    expect(custom.push.retry.delaysMs).toEqual([7 * SECOND]);
    expect(custom.mcp).toMatchObject({
      order: "each",
      challengeDelaysMs: [3, 4],
      suspend: { afterMs: 0, afterFailures: 2 },
    });
    expect(custom.mcp.retry.delaysMs).toEqual([SECOND, 5 * SECOND, 30 * SECOND, 2 * MINUTE]);
    expect(custom["mcp-standard"]).toBe(custom.mcp);
    expect(policies.mcp).toMatchObject({
      challengeDelaysMs: [1000, 3000],
      suspend: { afterMs: 10 * MINUTE, afterFailures: 10 },
    });
    expect(policies.mcp.retry).toMatchObject({ horizonMs: 5 * MINUTE, jitter: 0.1 });
    expect(() => channelPolicies({ events: { suspendAfterFailures: 0 } })).toThrow(/suspendAfterFailures/);
    expect(() => channelPolicies({ events: { suspendAfterMs: -1 } })).toThrow(/suspendAfterMs/);
  });
});

// What attempt.ts writes and answers for each kind of decision: the outbox row (retried, deleted,
// or left for the end, which removes the whole queue), the dead letter, and whether the worker goes
// on with the next row.
describe("planFailure", () => {
  it.each<[string, "push" | "mcp", Case, string]>([
    ["push: a retry holds the queue", "push", {}, "row retry, no dead letter, retry_later"],
    [
      "push: 410 ends, the end removes the queue",
      "push",
      { status: 410 },
      "row keep, dead letter gone, stopped",
    ],
    [
      "push: exhausted retries end the subscription",
      "push",
      { attempts: 7, firstAttemptAt: NOW - 24 * HOUR },
      "row keep, dead letter retries-exhausted, stopped",
    ],
    [
      "push: a failed final row is removed; the rest waits",
      "push",
      { final: true },
      "row delete, no dead letter, stopped",
    ],
    ["mcp: a retry lets the next event go", "mcp", {}, "row retry, no dead letter, retry_later"],
    [
      "mcp: 413 drops the event, the next goes",
      "mcp",
      { status: 413 },
      "row delete, dead letter too-large, dropped",
    ],
    [
      "mcp: 410 drops the event, the next goes",
      "mcp",
      { status: 410 },
      "row delete, dead letter gone, dropped",
    ],
    [
      "mcp: an exhausted event is given up, the next goes",
      "mcp",
      { attempts: 4 },
      "row delete, dead letter retries-exhausted, dropped",
    ],
    [
      "mcp: a suspension stops the pass; the event keeps its retry",
      "mcp",
      { before: [NOW - 10 * MINUTE, 9] },
      "row retry, no dead letter, stopped",
    ],
    [
      "mcp: a dropped event past the threshold stops the pass too",
      "mcp",
      { status: 413, before: [NOW - 20 * MINUTE, 30] },
      "row delete, dead letter too-large, stopped",
    ],
  ])("%s", (_, channel, c, expected) => {
    const plan = planFailure(policies[channel], failedAttempt(c));
    expect(plan.decision).toEqual(decideFailure(policies[channel], failedAttempt(c)));
    const letter = plan.deadLetter === null ? "no dead letter" : `dead letter ${plan.deadLetter}`;
    expect(`row ${plan.row}, ${letter}, ${plan.outcome}`).toBe(expected);
  });
});

describe("withoutCursor", () => {
  it("cuts the cursor off an event body and leaves the rest byte for byte", () => {
    const sketch = JSON.stringify({
      id: "s",
      eventId: "e",
      name: "n",
      timestamp: "t",
      data: { a: 1 },
      cursor: "c7",
    });
    expect(withoutCursor(sketch)).toBe(
      JSON.stringify({ id: "s", eventId: "e", name: "n", timestamp: "t", data: { a: 1 } }),
    );
    const standard = JSON.stringify({
      eventId: "e",
      name: "n",
      timestamp: "t",
      data: {},
      cursor: 'a,"cursor":"b',
    });
    expect(withoutCursor(standard)).toBe(
      JSON.stringify({ eventId: "e", name: "n", timestamp: "t", data: {} }),
    );
  });

  it("leaves a body without a cursor and every control body as it is", () => {
    const bodies = [
      JSON.stringify({ eventId: "e", name: "n", timestamp: "t", data: { cursor: "inside data" } }),
      JSON.stringify({ eventId: "e", name: "n", timestamp: "t", data: { x: { cursor: "c" } } }),
      JSON.stringify({ type: "gap", cursor: "c9" }),
      JSON.stringify({ type: "gap", cursor: null }),
      JSON.stringify({ type: "terminated", error: { code: -32012, message: "Unauthorized" } }),
      JSON.stringify({ id: "s", error: { code: -32012, message: "Unauthorized" } }),
    ];
    for (const body of bodies) expect(withoutCursor(body)).toBe(body);
  });
});
