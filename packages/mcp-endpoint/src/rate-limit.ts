/**
 * Token buckets keyed by client (binding rule 3: holders MAY limit the rate of requests). Each key
 * holds `capacity` tokens and regains `refillPerSecond`; a call takes one or is told how many whole
 * seconds to wait. Keys live in a bounded map: when it is full, the least recently used key is
 * dropped (a dropped key comes back with a full bucket, which only ever errs towards serving).
 */

export interface RateLimit {
  /** Burst size: calls a fresh client may make at once. */
  capacity: number;
  /** Sustained rate. */
  refillPerSecond: number;
}

/** The limit that refused a call: its name, and how whoever runs the endpoint changes it. */
export interface LimitNote {
  name: string;
  hint: string;
}

export type RateVerdict = { ok: true } | { ok: false; retryAfterSeconds: number; limit?: LimitNote };

/** One client's tool-call allowance, asked once per call (a token bucket here, or a shared limit). */
export type CallLimit = () => RateVerdict | Promise<RateVerdict>;

export interface RateLimiter {
  take(key: string): RateVerdict;
  /** How many keys are tracked (for tests and metrics). */
  readonly size: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

/** The note of an endpoint's own token bucket, set by the option `option` of createMcpEndpoint. */
export function localLimitNote(option: string, limit: RateLimit): LimitNote {
  return {
    name: option,
    hint: `The limit ${option} (${limit.capacity} at once, ${limit.refillPerSecond} a second) was reached; whoever runs this endpoint changes it with the ${option} option.`,
  };
}

/** A limiter whose refusals carry `note`. */
export function notedLimiter(limiter: RateLimiter, note: LimitNote): (key: string) => RateVerdict {
  return (key) => {
    const verdict = limiter.take(key);
    return verdict.ok ? verdict : { ...verdict, limit: note };
  };
}

export function createRateLimiter(
  limit: RateLimit,
  options: { clock?: () => number; maxKeys?: number } = {},
): RateLimiter {
  const { capacity, refillPerSecond } = limit;
  if (
    !(capacity >= 1) ||
    !(refillPerSecond > 0) ||
    !Number.isFinite(capacity) ||
    !Number.isFinite(refillPerSecond)
  ) {
    throw new RangeError("a rate limit needs capacity ≥ 1 and refillPerSecond > 0");
  }
  const clock = options.clock ?? Date.now;
  const maxKeys = options.maxKeys ?? 100_000;
  const buckets = new Map<string, Bucket>();
  return {
    take(key) {
      const now = clock();
      let bucket = buckets.get(key);
      if (bucket === undefined) {
        bucket = { tokens: capacity, at: now };
        if (buckets.size >= maxKeys) {
          const oldest = buckets.keys().next();
          if (!oldest.done) buckets.delete(oldest.value);
        }
      } else {
        buckets.delete(key); // re-inserted below: the map's order is least recently used first
        const elapsed = Math.max(0, now - bucket.at) / 1000;
        bucket.tokens = Math.min(capacity, bucket.tokens + elapsed * refillPerSecond);
        bucket.at = now;
      }
      buckets.set(key, bucket);
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1;
        return { ok: true };
      }
      return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / refillPerSecond)) };
    },
    get size() {
      return buckets.size;
    },
  };
}
