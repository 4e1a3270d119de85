/**
 * The holder's limit buckets and their defaults, and
 * the `bucket=points/seconds` form the CLI and the environment use to change them.
 */
import type { LimitRule } from "./shared-limiter.js";

export const DEFAULT_LIMITS = {
  /** Mails sent at an unauthenticated party's request (sign-in links, confirmations), per recipient. */
  "mail.recipient": { points: 3, durationSeconds: 3600 },
  /** The same mails, per client address (IPv6 by /64). */
  "mail.client": { points: 10, durationSeconds: 3600 },
  /** The same mails, per interaction (one sign-in, one consent link). */
  "mail.interaction": { points: 3, durationSeconds: 3600 },
  /** Dynamic client registrations per client address. */
  "oauth.register": { points: 10, durationSeconds: 3600 },
  /** New MCP sessions per client address (for /mcp). */
  "mcp.session": { points: 30, durationSeconds: 150 },
  /** MCP tool calls per client (for /mcp). */
  "mcp.tool": { points: 300, durationSeconds: 60 },
} as const satisfies Record<string, LimitRule>;

export type LimitBucket = keyof typeof DEFAULT_LIMITS;

export const LIMIT_BUCKETS = Object.keys(DEFAULT_LIMITS) as LimitBucket[];

/**
 * Parses `mail.recipient=3/3600` (several separated by commas or given one by one). Throws a
 * RangeError that says what was wrong.
 */
export function parseLimitSpecs(specs: readonly string[]): Partial<Record<LimitBucket, LimitRule>> {
  const out: Partial<Record<LimitBucket, LimitRule>> = {};
  for (const spec of specs.flatMap((value) => value.split(","))) {
    const text = spec.trim();
    if (text === "") continue;
    const match = /^([a-z.]+)=(\d{1,9})\/(\d{1,9})$/.exec(text);
    if (match === null) {
      throw new RangeError(
        `a limit is bucket=points/seconds, e.g. mail.recipient=3/3600, not ${JSON.stringify(text)}`,
      );
    }
    const [, bucket = "", points = "", seconds = ""] = match;
    if (!(LIMIT_BUCKETS as string[]).includes(bucket)) {
      throw new RangeError(
        `unknown limit ${JSON.stringify(bucket)}; the limits are ${LIMIT_BUCKETS.join(", ")}`,
      );
    }
    const rule = { points: Number(points), durationSeconds: Number(seconds) };
    if (rule.points < 1 || rule.durationSeconds < 1) {
      throw new RangeError(`the limit ${bucket} needs at least 1 point and 1 second`);
    }
    out[bucket as LimitBucket] = rule;
  }
  return out;
}
