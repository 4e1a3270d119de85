/**
 * Delivery figures for the operator's chart: successes, failures and attempt times per 5-minute
 * bucket and channel. The attempt log keeps only failures, and a write per success would cost the
 * hot path, so each process counts in memory (a map lookup and a few additions per attempt) and
 * adds its counts to `delivery_stats` every few seconds and when its worker stops. The upsert adds
 * to what is there, so processes sharing the database add into the same rows. Buckets older than
 * `STATS_KEPT_MS` are deleted by a flush now and then.
 */
import { type Kysely, sql } from "@doorbell/store";
import type { Logger } from "pino";
import type { Channel, DeliveryStatsRow, DeliveryTables } from "./schema.js";

type Db = Kysely<DeliveryTables>;

export const STATS_BUCKET_MS = 5 * 60_000;
/** How long buckets are kept: the chart's longest range. */
export const STATS_KEPT_MS = 30 * 24 * 60 * 60_000;
/** How long counts wait in memory before they are added to the table. */
export const STATS_FLUSH_MS = 5_000;
/** How often a process deletes buckets past `STATS_KEPT_MS`. */
const PRUNE_EVERY_MS = 60 * 60_000;

type Tally = Omit<DeliveryStatsRow, "channel"> & { channel: Channel };

export interface StatsRecorder {
  /** One attempt's outcome: delivered (2xx) or not, how long it took, when it was sent. */
  record(channel: Channel, delivered: boolean, durationMs: number, at: number): void;
  /** Adds the counts waiting in memory to the table now (and prunes, when it is time). */
  flush(): Promise<void>;
}

export const bucketOf = (at: number): number => at - (at % STATS_BUCKET_MS);

export function createStatsRecorder(options: {
  db: Db;
  clock: () => number;
  log: Pick<Logger, "warn">;
  flushEveryMs?: number;
}): StatsRecorder {
  const flushEveryMs = options.flushEveryMs ?? STATS_FLUSH_MS;
  // By bucket, then channel: numbers and a few channel names as keys, nothing built per attempt.
  let pending = new Map<number, Map<Channel, Tally>>();
  let timer: NodeJS.Timeout | undefined;
  let flushing: Promise<void> = Promise.resolve();
  let prunedAt = Number.NEGATIVE_INFINITY;

  const tallyOf = (into: Map<number, Map<Channel, Tally>>, bucket: number, channel: Channel): Tally => {
    let byChannel = into.get(bucket);
    if (byChannel === undefined) {
      byChannel = new Map();
      into.set(bucket, byChannel);
    }
    let tally = byChannel.get(channel);
    if (tally === undefined) {
      tally = {
        bucket_start: bucket,
        channel,
        successes: 0,
        failures: 0,
        latency_ms_sum: 0,
        latency_ms_max: 0,
        within_100ms: 0,
        within_1s: 0,
        within_5s: 0,
      };
      byChannel.set(channel, tally);
    }
    return tally;
  };

  const addBack = (tally: Tally) => {
    const into = tallyOf(pending, tally.bucket_start, tally.channel);
    into.successes += tally.successes;
    into.failures += tally.failures;
    into.latency_ms_sum += tally.latency_ms_sum;
    into.latency_ms_max = Math.max(into.latency_ms_max, tally.latency_ms_max);
    into.within_100ms += tally.within_100ms;
    into.within_1s += tally.within_1s;
    into.within_5s += tally.within_5s;
  };

  const write = async (): Promise<void> => {
    const batch = [...pending.values()].flatMap((byChannel) => [...byChannel.values()]);
    pending = new Map();
    const now = options.clock();
    try {
      if (batch.length > 0) await upsertStats(options.db, batch);
      if (now - prunedAt >= PRUNE_EVERY_MS) {
        prunedAt = now;
        await options.db
          .deleteFrom("delivery_stats")
          .where("bucket_start", "<", now - STATS_KEPT_MS)
          .execute();
      }
    } catch (error) {
      // Kept for the next flush: the figures are late, not lost (unless the process ends first).
      for (const tally of batch) addBack(tally);
      options.log.warn(
        { err: (error as Error).message },
        "writing delivery stats failed; kept for the next try",
      );
    }
  };

  const flush = (): Promise<void> => {
    if (timer !== undefined) {
      clearTimeout(timer);
      timer = undefined;
    }
    flushing = flushing.then(write);
    return flushing;
  };

  return {
    record(channel, delivered, durationMs, at) {
      const ms = durationMs > 0 ? Math.round(durationMs) : 0;
      const tally = tallyOf(pending, at - (at % STATS_BUCKET_MS), channel);
      if (delivered) tally.successes++;
      else tally.failures++;
      tally.latency_ms_sum += ms;
      if (ms > tally.latency_ms_max) tally.latency_ms_max = ms;
      if (ms <= 100) tally.within_100ms++;
      if (ms <= 1_000) tally.within_1s++;
      if (ms <= 5_000) tally.within_5s++;
      if (timer === undefined) {
        timer = setTimeout(() => {
          timer = undefined;
          void flush();
        }, flushEveryMs);
        // Never what keeps a process alive: the worker's stop flushes.
        timer.unref();
      }
    },
    flush,
  };
}

/** Adds the tallies to their rows: the same statement on SQLite and PostgreSQL. */
export async function upsertStats(db: Db, tallies: readonly Tally[]): Promise<void> {
  if (tallies.length === 0) return;
  await db
    .insertInto("delivery_stats")
    .values(tallies.map((tally) => ({ ...tally })))
    .onConflict((oc) =>
      oc.columns(["bucket_start", "channel"]).doUpdateSet((eb) => ({
        successes: eb("delivery_stats.successes", "+", eb.ref("excluded.successes")),
        failures: eb("delivery_stats.failures", "+", eb.ref("excluded.failures")),
        latency_ms_sum: eb("delivery_stats.latency_ms_sum", "+", eb.ref("excluded.latency_ms_sum")),
        latency_ms_max: sql<number>`case when excluded.latency_ms_max > delivery_stats.latency_ms_max then excluded.latency_ms_max else delivery_stats.latency_ms_max end`,
        within_100ms: eb("delivery_stats.within_100ms", "+", eb.ref("excluded.within_100ms")),
        within_1s: eb("delivery_stats.within_1s", "+", eb.ref("excluded.within_1s")),
        within_5s: eb("delivery_stats.within_5s", "+", eb.ref("excluded.within_5s")),
      })),
    )
    .execute();
}

/** One bin of the chart: the buckets from `start` for `binMs`, every channel added up. */
export interface StatsBin {
  start: number;
  successes: number;
  failures: number;
  /** Mean attempt time in ms, or null when there was no attempt. */
  meanMs: number | null;
  maxMs: number | null;
  within100ms: number;
  within1s: number;
  within5s: number;
}

/**
 * The figures from `from` (inclusive) to `to` (exclusive) in bins of `binMs` (a multiple of the
 * bucket), every bin present, the oldest first. Bins are counted from the epoch, so an hour or a
 * day bin is a UTC hour or day.
 */
export async function readStats(
  db: Db,
  range: { from: number; to: number; binMs: number },
): Promise<StatsBin[]> {
  const { from, to, binMs } = range;
  const rows = await db
    .selectFrom("delivery_stats")
    .select((eb) => [
      sql<number>`bucket_start - (bucket_start % ${sql.lit(binMs)})`.as("bin"),
      eb.fn.sum<number>("successes").as("successes"),
      eb.fn.sum<number>("failures").as("failures"),
      eb.fn.sum<number>("latency_ms_sum").as("latency"),
      eb.fn.max<number>("latency_ms_max").as("max"),
      eb.fn.sum<number>("within_100ms").as("w100"),
      eb.fn.sum<number>("within_1s").as("w1s"),
      eb.fn.sum<number>("within_5s").as("w5s"),
    ])
    .where("bucket_start", ">=", from)
    .where("bucket_start", "<", to)
    .groupBy(sql`bucket_start - (bucket_start % ${sql.lit(binMs)})`)
    .execute();
  const byBin = new Map(rows.map((row) => [Number(row.bin), row]));
  const bins: StatsBin[] = [];
  for (let start = from - (from % binMs); start < to; start += binMs) {
    const row = byBin.get(start);
    const successes = Number(row?.successes ?? 0);
    const failures = Number(row?.failures ?? 0);
    const attempts = successes + failures;
    bins.push({
      start,
      successes,
      failures,
      meanMs: attempts === 0 ? null : Math.round(Number(row?.latency ?? 0) / attempts),
      maxMs: attempts === 0 ? null : Number(row?.max ?? 0),
      within100ms: Number(row?.w100 ?? 0),
      within1s: Number(row?.w1s ?? 0),
      within5s: Number(row?.w5s ?? 0),
    });
  }
  return bins;
}
