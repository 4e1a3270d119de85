/**
 * What each shared limit counts and how an operator changes it, in the words `doorbell serve
 * --help` prints and every 429 names. A refusal names only the limit and its rule, never a count
 * or a key, so it tells nobody anything about other callers.
 */
import { DEFAULT_LIMITS, LIMIT_BUCKETS, type LimitBucket } from "./rules.js";
import type { LimitRule } from "./shared-limiter.js";

/** The flag of `doorbell serve` and the variable that change a limit. */
export const LIMIT_FLAG = "--limit";
export const LIMIT_VARIABLE = "DOORBELL_LIMITS";

/** What each limit counts, short enough for one line of `--help`. */
export const LIMIT_SUBJECTS: Readonly<Record<LimitBucket, string>> = {
  "mail.recipient": "mails asked for, per recipient",
  "mail.client": "mails asked for, per client address",
  "mail.interaction": "mails per sign-in, consent link or renewal",
  "oauth.register": "OAuth client registrations per address",
  "mcp.session": "new 2025-era MCP sessions per address",
  "mcp.tool": "MCP tool calls per client address",
};

/** A limit that refused a call, as a 429 names it. */
export interface LimitHint {
  /** The limit's name, e.g. `mail.client`. */
  name: string;
  /** Its rule now (the default or the operator's). */
  points: number;
  durationSeconds: number;
  /** The flag that changes it, e.g. `--limit mail.client=N/SECONDS`. */
  flag: string;
  /** The environment variable that does the same. */
  variable: string;
}

/** `mail.client=10/3600`: a rule in the form `--limit` takes. */
export const limitSpec = (bucket: LimitBucket, rule: LimitRule): string =>
  `${bucket}=${rule.points}/${rule.durationSeconds}`;

/** The hint for a shared limit: changed by `--limit` or its variable. */
export function sharedLimitHint(bucket: LimitBucket, rule: LimitRule): LimitHint {
  return {
    name: bucket,
    points: rule.points,
    durationSeconds: rule.durationSeconds,
    flag: `${LIMIT_FLAG} ${bucket}=N/SECONDS`,
    variable: LIMIT_VARIABLE,
  };
}

/** The English sentence for an operator, for tool errors and JSON refusals. */
export function operatorHintText(hint: LimitHint): string {
  return `The limit ${hint.name} (${hint.points} per ${hint.durationSeconds} s) was reached; the holder's operator changes it with ${hint.flag} (or ${hint.variable}).`;
}

/** One line per limit for `--help`: the flag with its default, and what the limit counts. */
export function limitUsageLines(): string[] {
  const specs = LIMIT_BUCKETS.map((bucket) => `${LIMIT_FLAG} ${limitSpec(bucket, DEFAULT_LIMITS[bucket])}`);
  const width = Math.max(...specs.map((spec) => spec.length));
  return LIMIT_BUCKETS.map((bucket, i) => `${(specs[i] ?? "").padEnd(width)}  ${LIMIT_SUBJECTS[bucket]}`);
}
