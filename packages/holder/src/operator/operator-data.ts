/**
 * What the operator page shows, read from the delivery engine's tables through its read
 * functions: the subscriptions' delivery state, the chart's figures, the recent failed attempts
 * and the dead letters waiting for a replay. Nothing here opens a sealed column.
 */
import {
  type DeliveryLogEntry,
  type DeliveryTables,
  listDeliveries,
  type OpenDeadLetter,
  openDeadLetters,
  type RecentAttempt,
  readStats,
  recentFailedAttempts,
  type StatsBin,
} from "@doorbell/delivery";
import type { Kysely } from "@doorbell/store";

const HOUR = 60 * 60_000;
const DAY = 24 * HOUR;

/** How many rows of each list the page shows (the newest). */
export const OPERATOR_ROWS = { endpoints: 100, attempts: 50, deadLetters: 50 } as const;

export interface OperatorView {
  now: number;
  endpoints: DeliveryLogEntry[];
  /** The last 24 hours by UTC hour, the current one last. */
  hours: StatsBin[];
  /** The last 30 days by UTC day, today last. */
  days: StatsBin[];
  attempts: RecentAttempt[];
  deadLetters: OpenDeadLetter[];
}

export async function readOperatorView(db: Kysely<DeliveryTables>, now: number): Promise<OperatorView> {
  const hourEnd = now - (now % HOUR) + HOUR;
  const dayEnd = now - (now % DAY) + DAY;
  return {
    now,
    endpoints: await listDeliveries(db, { limit: OPERATOR_ROWS.endpoints }),
    hours: await readStats(db, { from: hourEnd - 24 * HOUR, to: hourEnd, binMs: HOUR }),
    days: await readStats(db, { from: dayEnd - 30 * DAY, to: dayEnd, binMs: DAY }),
    attempts: await recentFailedAttempts(db, OPERATOR_ROWS.attempts),
    deadLetters: await openDeadLetters(db, OPERATOR_ROWS.deadLetters),
  };
}
