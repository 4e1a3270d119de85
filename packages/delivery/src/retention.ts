/**
 * Bounded storage: the delivery log's rows are deleted once they are old. Delivered doorbells
 * leave no row behind (a delivered outbox row is deleted when it is recorded or when its lease
 * is released), and an ended subscription is purged with its log (push profile §6 rule 7), so
 * what grows under a steady load are the failed-attempt log of live subscriptions and their dead
 * letters. Deleted in small batches by an indexed key with a pause between, so no statement holds
 * locks for long; deleting by age is idempotent, so passes run by several processes at once
 * only share the work.
 */
import type { Db } from "./context.js";
import { DeliveryError } from "./errors.js";

const DAY_MS = 24 * 60 * 60 * 1000;

/** Failed attempts and replayed dead letters are kept this long by default. */
export const DEFAULT_RETENTION_MS = 30 * DAY_MS;
/** Dead letters never replayed are kept this long by default: a replay stays possible for a while. */
export const DEFAULT_DEAD_LETTER_RETENTION_MS = 90 * DAY_MS;
/** Rows one statement deletes at most. */
export const PRUNE_BATCH = 500;
/** The pause between two batches, so other writers get the tables in between. */
export const PRUNE_PAUSE_MS = 20;

export interface PruneOptions {
  /** Epoch milliseconds the ages are counted from. */
  now: number;
  /** Failed-attempt log entries, and dead letters replayed, older than this go (default 30 days). */
  maxAgeMs?: number;
  /** Dead letters never replayed, given up on longer ago than this, go (default 90 days). */
  deadLetterMaxAgeMs?: number;
  /** Count what would go; delete nothing. */
  dryRun?: boolean;
  batchSize?: number;
  pauseMs?: number;
  /** Stops before the next batch once aborted (a background pass that lost the lead). */
  signal?: AbortSignal;
}

/** Rows deleted (or, in a dry run, that would be), per table. */
export interface PruneResult {
  dryRun: boolean;
  /** The cut-offs used: older rows go. */
  attemptsBefore: number;
  deadLettersBefore: number;
  replayedBefore: number;
  deleted: {
    delivery_attempt_log: number;
    delivery_dead_letters: number;
  };
}

/** Deletes the delivery log's rows past their age, in batches. */
export async function pruneDeliveries(db: Db, options: PruneOptions): Promise<PruneResult> {
  const maxAgeMs = options.maxAgeMs ?? DEFAULT_RETENTION_MS;
  const deadLetterMaxAgeMs = options.deadLetterMaxAgeMs ?? DEFAULT_DEAD_LETTER_RETENTION_MS;
  for (const [name, value] of [
    ["maxAgeMs", maxAgeMs],
    ["deadLetterMaxAgeMs", deadLetterMaxAgeMs],
  ] as const) {
    if (!(Number.isSafeInteger(value) && value >= DAY_MS)) {
      throw new DeliveryError(
        "ERR_DELIVERY_CONFIG",
        `${name} is a whole number of milliseconds, at least a day`,
      );
    }
  }
  const batchSize = options.batchSize ?? PRUNE_BATCH;
  const pauseMs = options.pauseMs ?? PRUNE_PAUSE_MS;
  const attemptsBefore = options.now - maxAgeMs;
  const deadLettersBefore = options.now - deadLetterMaxAgeMs;
  const replayedBefore = attemptsBefore;
  const result: PruneResult = {
    dryRun: options.dryRun === true,
    attemptsBefore,
    deadLettersBefore,
    replayedBefore,
    deleted: { delivery_attempt_log: 0, delivery_dead_letters: 0 },
  };

  if (options.dryRun) {
    const attempts = await db
      .selectFrom("delivery_attempt_log")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("at", "<", attemptsBefore)
      .executeTakeFirst();
    const dead = await db
      .selectFrom("delivery_dead_letters")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where((eb) =>
        eb.or([
          eb("created_at", "<", deadLettersBefore),
          eb.and([eb("replayed_at", "is not", null), eb("replayed_at", "<", replayedBefore)]),
        ]),
      )
      .executeTakeFirst();
    result.deleted.delivery_attempt_log = Number(attempts?.n ?? 0);
    result.deleted.delivery_dead_letters = Number(dead?.n ?? 0);
    return result;
  }

  const batches = { size: batchSize, pauseMs, signal: options.signal };
  result.deleted.delivery_attempt_log = await inBatches(batches, async (limit) => {
    const deleted = await db
      .deleteFrom("delivery_attempt_log")
      .where(
        "id",
        "in",
        db
          .selectFrom("delivery_attempt_log")
          .select("id")
          .where("at", "<", attemptsBefore)
          .orderBy("at")
          .limit(limit),
      )
      .executeTakeFirst();
    return Number(deleted.numDeletedRows);
  });
  const deadLetterBatch = (older: "created_at" | "replayed_at", before: number) => async (limit: number) => {
    const deleted = await db
      .deleteFrom("delivery_dead_letters")
      .where(
        "id",
        "in",
        db
          .selectFrom("delivery_dead_letters")
          .select("id")
          .where(older, "<", before)
          .orderBy(older)
          .limit(limit),
      )
      .executeTakeFirst();
    return Number(deleted.numDeletedRows);
  };
  result.deleted.delivery_dead_letters =
    (await inBatches(batches, deadLetterBatch("created_at", deadLettersBefore))) +
    (await inBatches(batches, deadLetterBatch("replayed_at", replayedBefore)));
  return result;
}

/** Runs `batch` until it deletes fewer than a whole batch, pausing between; resolves with the total. */
async function inBatches(
  options: { size: number; pauseMs: number; signal: AbortSignal | undefined },
  batch: (limit: number) => Promise<number>,
): Promise<number> {
  let total = 0;
  for (;;) {
    if (options.signal?.aborted) return total;
    const deleted = await batch(options.size);
    total += deleted;
    if (deleted < options.size) return total;
    await new Promise<void>((resolve) => setTimeout(resolve, options.pauseMs));
  }
}
