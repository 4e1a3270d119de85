import { describe, expect, it } from "vitest";
import { DEFAULT_RETRY_POLICY, nextAttemptAt } from "../src/index.js";

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const start = 1_000_000;

/** Walks the whole schedule from a first attempt at `start`, every attempt failing. */
function attemptTimes(random: () => number, retryAfterSeconds?: number): number[] {
  const times = [start];
  for (let attempts = 1; ; attempts++) {
    const next = nextAttemptAt(DEFAULT_RETRY_POLICY, {
      attempts,
      firstAttemptAt: start,
      now: times[times.length - 1] as number,
      random,
      ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
    });
    if (next === undefined) return times;
    times.push(next);
  }
}

describe("push profile §6 rule 5: Standard Webhooks schedule cut at 24 h", () => {
  it("without jitter: 0, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, then one last attempt at 24 h", () => {
    const offsets = attemptTimes(() => 0.5).map((t) => t - start);
    expect(offsets).toEqual([
      0,
      5 * S,
      5 * S + 5 * M,
      5 * S + 35 * M,
      5 * S + 2 * H + 35 * M,
      5 * S + 7 * H + 35 * M,
      5 * S + 17 * H + 35 * M,
      24 * H,
    ]);
  });

  it("jitter stays within ±10% of each delay and never passes the 24 h horizon", () => {
    for (const random of [() => 0, () => 0.999999]) {
      const times = attemptTimes(random);
      const delays = times.slice(1).map((t, i) => t - (times[i] as number));
      const scheduled = [5 * S, 5 * M, 30 * M, 2 * H, 5 * H, 10 * H];
      scheduled.forEach((base, i) => {
        expect(delays[i]).toBeGreaterThanOrEqual(Math.floor(base * 0.9));
        expect(delays[i]).toBeLessThanOrEqual(Math.ceil(base * 1.1));
      });
      expect(times[times.length - 1]).toBe(start + 24 * H);
    }
  });

  it("every random draw gives a delay inside the bounds", () => {
    for (let i = 0; i < 1000; i++) {
      const next = nextAttemptAt(DEFAULT_RETRY_POLICY, {
        attempts: 3,
        firstAttemptAt: start,
        now: start,
        random: Math.random,
      });
      expect(next).toBeGreaterThanOrEqual(start + 27 * M);
      expect(next).toBeLessThanOrEqual(start + 33 * M);
    }
  });

  it("Retry-After lengthens a delay up to max(2 × delay, 1 min), and never shortens one", () => {
    const at = (attempts: number, retryAfterSeconds: number) =>
      (nextAttemptAt(DEFAULT_RETRY_POLICY, {
        attempts,
        firstAttemptAt: start,
        now: start,
        random: () => 0.5,
        retryAfterSeconds,
      }) as number) - start;
    expect(at(1, 30)).toBe(30 * S); // asked 30 s, schedule 5 s, cap 1 min
    expect(at(1, 3600)).toBe(1 * M); // capped at 1 min
    expect(at(2, 1)).toBe(5 * M); // shorter than the schedule: ignored
    expect(at(3, 3 * 3600)).toBe(60 * M); // capped at 2 × 30 min
  });

  it("no attempt after the horizon, whatever the schedule says", () => {
    expect(
      nextAttemptAt(DEFAULT_RETRY_POLICY, {
        attempts: 2,
        firstAttemptAt: start,
        now: start + 24 * H,
        random: () => 0.5,
      }),
    ).toBeUndefined();
    expect(
      nextAttemptAt(DEFAULT_RETRY_POLICY, {
        attempts: 9,
        firstAttemptAt: start,
        now: start + H,
        random: () => 0.5,
      }),
    ).toBe(start + 24 * H);
    expect(
      nextAttemptAt(DEFAULT_RETRY_POLICY, {
        attempts: 10,
        firstAttemptAt: start,
        now: start + H,
        random: () => 0.5,
      }),
    ).toBeUndefined();
  });
});
