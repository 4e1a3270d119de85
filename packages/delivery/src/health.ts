/**
 * Endpoint health: how a subscription's endpoint has been answering. Attempts are counted in fixed
 * windows of `HEALTH_WINDOW_MS` (UTC days), the current one and the one before it, so the figures
 * cover between one and two days. The counts ride on writes the delivery paths already make: each
 * failure's update of the subscription (attempt.ts) and the release that writes lastDeliveryAt
 * after a claim's successes (outbox/*). A success costs no statement of its own.
 *
 * An endpoint that fails every attempt for `disableAfterMs` (default 5 days) is disabled: a push
 * subscription ends with `delivery-failed` (push profile §6 rule 5), an MCP Events subscription is
 * suspended (`deliveryStatus.active: false`, SEP-3415) until a refresh or `doorbell endpoints
 * enable`. A push subscription whose retries run out (rule 5, within 24 h) is disabled the same way.
 */
import { sql } from "@doorbell/store";
import type { Decision } from "./decide.js";
import { DeliveryError } from "./errors.js";
import type { Channel, SubscriptionRow } from "./schema.js";

/** A SQL expression (Kysely's RawBuilder, which the store does not re-export). */
type RawBuilder<T> = ReturnType<typeof sql.lit<T>>;

const HOUR_MS = 60 * 60 * 1000;
export const HEALTH_WINDOW_MS = 24 * HOUR_MS;
export const DEFAULT_ENDPOINT_DISABLE_AFTER_MS = 5 * 24 * HOUR_MS;

export type DisabledReason = "failing-too-long" | "retries-exhausted";

/** The health settings of an engine (`DeliveryEngineOptions.endpointHealth`). */
export interface EndpointHealthOptions {
  /** Failing every attempt for this long disables the endpoint; default 5 days. */
  disableAfterMs?: number;
}

export function checkedDisableAfter(options: EndpointHealthOptions | undefined): number {
  const ms = options?.disableAfterMs ?? DEFAULT_ENDPOINT_DISABLE_AFTER_MS;
  if (!(Number.isSafeInteger(ms) && ms >= 60_000)) {
    throw new DeliveryError(
      "ERR_DELIVERY_CONFIG",
      "endpointHealth.disableAfterMs must be a whole number of milliseconds, at least one minute",
    );
  }
  return ms;
}

/** The start of the window `at` falls in. */
export const windowOf = (at: number): number => at - (at % HEALTH_WINDOW_MS);

/**
 * The column assignments that count `successes` and `failures` at `at` (SQL, so that concurrent
 * writers add rather than overwrite): a write in a later window moves the current counts to the
 * previous window (or drops them when a whole window passed without an attempt). A write from an
 * earlier window (a slower process's clock) is added to the current one.
 */
export function healthCounts(
  at: number | RawBuilder<number>,
  counts: { successes: number | RawBuilder<number>; failures: number | RawBuilder<number> },
): Record<
  | "health_window_start"
  | "health_successes"
  | "health_failures"
  | "health_prev_successes"
  | "health_prev_failures",
  RawBuilder<number>
> {
  // Typed casts: PostgreSQL cannot infer the type of a bare parameter in `$1 % $2`.
  const time = typeof at === "number" ? sql<number>`cast(${at} as bigint)` : at;
  const count = (n: number | RawBuilder<number>) =>
    typeof n === "number" ? sql<number>`cast(${n} as integer)` : n;
  const successes = count(counts.successes);
  const failures = count(counts.failures);
  const window = sql.lit(HEALTH_WINDOW_MS);
  const start = sql<number>`(${time} - (${time} % ${window}))`;
  const same = sql`health_window_start is not null and health_window_start >= ${start}`;
  const previous = sql`health_window_start = ${start} - ${window}`;
  return {
    health_prev_successes: sql<number>`case when ${same} then health_prev_successes when ${previous} then health_successes else 0 end`,
    health_prev_failures: sql<number>`case when ${same} then health_prev_failures when ${previous} then health_failures else 0 end`,
    health_successes: sql<number>`case when ${same} then health_successes + ${successes} else ${successes} end`,
    health_failures: sql<number>`case when ${same} then health_failures + ${failures} else ${failures} end`,
    health_window_start: sql<number>`case when ${same} then health_window_start else ${start} end`,
  };
}

/** The same assignments as one SQL fragment (`a = …, b = …`), for statements written in SQL. */
export function healthCountsSql(
  at: number | RawBuilder<number>,
  counts: { successes: number | RawBuilder<number>; failures: number | RawBuilder<number> },
): RawBuilder<unknown> {
  return sql.join(
    Object.entries(healthCounts(at, counts)).map(([column, value]) => sql`${sql.ref(column)} = ${value}`),
  );
}

/** Where an endpoint stands, in the words the CLI, the operator page and the events use. */
export type EndpointState = "healthy" | "failing" | "suspended" | "disabled" | "ended";

export interface EndpointHealth {
  state: EndpointState;
  /** Attempts since `windowStart` (between one and two days ago), by result. */
  successes: number;
  failures: number;
  windowStart: number;
  lastSuccessAt: number | null;
  lastFailureAt: number | null;
  /** The category of the last failure (http_5xx, timeout, …) while it is not followed by a success. */
  lastErrorCategory: string | null;
  /** How long ago the last success was, at the time the health was read; null when never. */
  sinceLastSuccessMs: number | null;
  failingSince: number | null;
  disabledAt: number | null;
  disabledReason: string | null;
}

type HealthColumns = Pick<
  SubscriptionRow,
  | "status"
  | "delivery_active"
  | "last_delivery_at"
  | "last_error"
  | "failed_since"
  | "health_window_start"
  | "health_successes"
  | "health_failures"
  | "health_prev_successes"
  | "health_prev_failures"
  | "last_failure_at"
  | "disabled_at"
  | "disabled_reason"
>;

/** The columns of migration 7 that `endpointHealth` reads, beside deliveryStatus's. */
export const HEALTH_COLUMNS = [
  "health_window_start",
  "health_successes",
  "health_failures",
  "health_prev_successes",
  "health_prev_failures",
  "last_failure_at",
  "disabled_at",
  "disabled_reason",
] as const;

const numberOrNull = (value: number | string | null): number | null =>
  value === null ? null : Number(value);

/** An endpoint's health from its subscription's columns, as of `now`. */
export function endpointHealth(row: HealthColumns, now: number): EndpointHealth {
  const current = windowOf(now);
  const stored = numberOrNull(row.health_window_start);
  let successes = 0;
  let failures = 0;
  if (stored !== null && stored >= current) {
    successes = Number(row.health_successes) + Number(row.health_prev_successes);
    failures = Number(row.health_failures) + Number(row.health_prev_failures);
  } else if (stored === current - HEALTH_WINDOW_MS) {
    successes = Number(row.health_successes);
    failures = Number(row.health_failures);
  }
  const lastSuccessAt = numberOrNull(row.last_delivery_at);
  const disabledAt = numberOrNull(row.disabled_at);
  const active = Number(row.delivery_active) === 1;
  const state: EndpointState =
    disabledAt !== null && (row.status === "ended" || !active)
      ? "disabled"
      : row.status === "ended"
        ? "ended"
        : !active
          ? "suspended"
          : row.failed_since !== null
            ? "failing"
            : "healthy";
  return {
    state,
    successes,
    failures,
    windowStart: current - HEALTH_WINDOW_MS,
    lastSuccessAt,
    lastFailureAt: numberOrNull(row.last_failure_at),
    lastErrorCategory: row.last_error,
    sinceLastSuccessMs: lastSuccessAt === null ? null : Math.max(0, now - lastSuccessAt),
    failingSince: numberOrNull(row.failed_since),
    disabledAt,
    disabledReason: row.disabled_reason,
  };
}

/** What a failed attempt does to its endpoint, beyond the event's own fate (decide.ts). */
export type Disabling =
  /** Push: the subscription ends (rule 5's `delivery-failed`), for `reason`. */
  | { kind: "end"; reason: DisabledReason; announce: boolean }
  /** MCP Events: delivery is suspended; `announce` is false when it was disabled before. */
  | { kind: "suspend"; reason: DisabledReason; announce: boolean };

/**
 * Whether this failure disables the endpoint: pure, like `decideFailure`. The operator's own
 * webhook is never disabled (its events would have nowhere to go).
 */
export function disablingFor(
  channel: Channel,
  sub: Pick<SubscriptionRow, "disabled_at" | "status">,
  decision: Decision,
  now: number,
  disableAfterMs: number,
): Disabling | undefined {
  // An ended subscription's last `subscription.ended` failing changes nothing more.
  if (channel === "operator" || sub.status === "ended") return undefined;
  if (decision.kind === "end") {
    return decision.reason === "delivery-failed"
      ? { kind: "end", reason: "retries-exhausted", announce: true }
      : undefined;
  }
  if (now - decision.streak.failedSince < disableAfterMs) return undefined;
  if (channel === "push") return { kind: "end", reason: "failing-too-long", announce: true };
  return { kind: "suspend", reason: "failing-too-long", announce: sub.disabled_at === null };
}
