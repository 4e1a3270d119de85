/**
 * The delivery log kept bounded: failed attempts and dead letters past their age are deleted in
 * small batches (delivery's retention.ts), at most once an hour, as a step of the background pass.
 */
import { type DeliveryTables, pruneDeliveries } from "@doorbell/delivery";
import { asTables, type Database } from "@doorbell/store";
import type { Logger } from "pino";

/** How often the prune runs: rows become due by the day, so an hour is soon enough. */
const PRUNE_INTERVAL_MS = 60 * 60 * 1000;

export interface RetentionOptions {
  /** Failed attempts and replayed dead letters are kept this long (default 30 days). */
  retentionMs?: number;
  /** Dead letters never replayed are kept this long (default 90 days). */
  deadLetterRetentionMs?: number;
}

/** A background step: prunes when an hour has passed since the last prune of this process. */
export function deliveryRetentionStep(
  store: Database,
  options: RetentionOptions,
  clock: () => number,
  log: Logger,
): (signal: AbortSignal) => Promise<void> {
  const db = asTables<DeliveryTables>(store).db;
  let last = Number.NEGATIVE_INFINITY;
  return async (signal) => {
    const now = clock();
    if (now - last < PRUNE_INTERVAL_MS) return;
    last = now;
    const pruned = await pruneDeliveries(db, {
      now,
      signal,
      ...(options.retentionMs === undefined ? {} : { maxAgeMs: options.retentionMs }),
      ...(options.deadLetterRetentionMs === undefined
        ? {}
        : { deadLetterMaxAgeMs: options.deadLetterRetentionMs }),
    });
    const { delivery_attempt_log: attempts, delivery_dead_letters: deadLetters } = pruned.deleted;
    if (attempts + deadLetters > 0) {
      log.info({ event: "delivery.pruned", attempts, deadLetters }, "old delivery log rows deleted");
    }
  };
}
