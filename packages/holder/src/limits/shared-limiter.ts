/**
 * Rate limits that hold across processes: rate-limiter-flexible's fixed-window
 * limiter, with its counters in the holder's own database (SQLite or PostgreSQL, through
 * `@doorbell/store`), so every `doorbell serve` on one database counts the same calls.
 *
 * The library's own RateLimiterPostgres and RateLimiterSQLite want the raw driver (a pg Pool, a
 * synchronous better-sqlite3 handle) while the store owns its connections (SQLite's single writer
 * and durable commits); so this is a store limiter of the library's own kind
 * (`RateLimiterStoreAbstract`: `_upsert`, `_get`, `_delete`) over Kysely, one statement per
 * consume: an atomic `insert … on conflict do update … returning` on both engines. A busy limit
 * (100 calls a window or more, such as MCP tool calls) is counted in memory between writes once a
 * key's window is known (batched-counts.ts), so a call costs no write of its own; those counts are
 * written for all keys in one statement.
 *
 * Keys are hashed before they are stored (`hashKey`, a keyed hash in the holder), so the table
 * holds no address or e-mail in clear.
 */
import { createRequire } from "node:module";
import type { Database, Kysely } from "@doorbell/store";
import { sql } from "@doorbell/store";
import type { RateLimiterRes as RateLimiterResType, RateLimiterStoreAbstract } from "rate-limiter-flexible";
import { RateLimiterRes } from "rate-limiter-flexible";
import {
  BATCHED_FROM_POINTS,
  createBatchedCounts,
  type PendingPoints,
  type StoredWindow,
} from "./batched-counts.js";
import type { LimitsTables } from "./schema.js";

// The abstract store limiter is typed by the package but not exported from its index.
const StoreAbstract = createRequire(import.meta.url)(
  "rate-limiter-flexible/lib/RateLimiterStoreAbstract.js",
) as typeof RateLimiterStoreAbstract;

/** At most `points` calls per `durationSeconds` window, per key. */
export interface LimitRule {
  points: number;
  durationSeconds: number;
}

export type LimitVerdict = { ok: true; remaining: number } | { ok: false; retryAfterSeconds: number };

export interface SharedLimiter {
  /**
   * Counts one call (or `points`) of `key` against `bucket`'s rule. A bucket without a rule is a
   * programming error (throws). A database failure lets the call through and is logged by the
   * caller's `onError` (a limit must not take the holder down with the database).
   */
  consume(bucket: string, key: string, points?: number): Promise<LimitVerdict>;
  /** The rule of a bucket, for Retry-After texts and tests. */
  rule(bucket: string): LimitRule | undefined;
  /** Removes windows that ended (also done every few minutes by itself). */
  purgeExpired(): Promise<number>;
  /** Stops the purge and writes the counts still held in memory. */
  close(): Promise<void>;
}

export interface SharedLimiterOptions {
  store: Database<LimitsTables> | Database;
  rules: Readonly<Record<string, LimitRule>>;
  /** Turns a key into what is stored (default: the key itself). Use a keyed hash in production. */
  hashKey?: (key: string) => string;
  /** Epoch milliseconds (default Date.now). */
  clock?: () => number;
  /** How often ended windows are deleted (default 5 min; 0: never by itself). */
  purgeEveryMs?: number;
  /** How often the busy limits' counts held in memory are written (default 100 ms). */
  flushEveryMs?: number;
  onError?: (error: Error) => void;
}

/** The library's store limiter over `holder_rate_limits`. */
class DatabaseRateLimiter extends StoreAbstract {
  constructor(
    rule: LimitRule & { keyPrefix: string },
    private readonly store: Database<LimitsTables>,
    private readonly now: () => number,
  ) {
    super({
      points: rule.points,
      duration: rule.durationSeconds,
      keyPrefix: rule.keyPrefix,
      storeClient: store,
    });
  }

  _getRateLimiterRes(_rlKey: string, changedPoints: number, result: StoredWindow): RateLimiterResType {
    const consumed = Number(result.points);
    const points = (this as unknown as { points: number }).points;
    const expire = result.expire === null ? null : Number(result.expire);
    return new RateLimiterRes(
      Math.max(points - consumed, 0),
      expire === null ? -1 : Math.max(expire - this.now(), 0),
      consumed,
      changedPoints === consumed,
    );
  }

  _upsert(rlKey: string, points: number, msDuration: number, forceExpire = false): Promise<StoredWindow> {
    return addPoints(this.store.db, this.store.dialect, rlKey, points, msDuration, this.now(), forceExpire);
  }

  async _get(rlKey: string): Promise<StoredWindow | null> {
    const row = await this.store.db
      .selectFrom("holder_rate_limits")
      .select(["points", "expire"])
      .where("key", "=", rlKey)
      .executeTakeFirst();
    if (row === undefined || (row.expire !== null && Number(row.expire) <= this.now())) return null;
    return row;
  }

  async _delete(rlKey: string): Promise<boolean> {
    const result = await this.store.db
      .deleteFrom("holder_rate_limits")
      .where("key", "=", rlKey)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}

/**
 * Adds `points` to a key's window and answers its total and end: an atomic `insert … on conflict
 * do update … returning` on both engines. A window that ended starts again.
 */
async function addPoints(
  db: Kysely<LimitsTables>,
  dialect: Database["dialect"],
  rlKey: string,
  points: number,
  msDuration: number,
  now: number,
  forceExpire = false,
): Promise<StoredWindow> {
  const expire = msDuration > 0 ? now + msDuration : null;
  const update = forceExpire ? sql`points = excluded.points, expire = excluded.expire` : addedUp(now);
  // PostgreSQL: the count commits without waiting for the WAL flush (synchronous_commit off for
  // this transaction). A database crash can only forget a few counted calls, while one flush per
  // MCP call was what the database waited on most in the soak.
  const query =
    dialect === "postgres"
      ? sql<StoredWindow>`with async as (select set_config('synchronous_commit', 'off', true) as setting)
          insert into holder_rate_limits (key, points, expire)
          select ${rlKey}::text, ${points}::bigint, ${expire}::bigint where (select setting from async) = 'off'
          on conflict (key) do update set ${update}
          returning points, expire`
      : sql<StoredWindow>`insert into holder_rate_limits (key, points, expire) values (${rlKey}, ${points}, ${expire})
          on conflict (key) do update set ${update}
          returning points, expire`;
  const row = (await query.execute(db)).rows[0];
  if (row === undefined) throw new Error("the rate-limit upsert returned no row");
  return row;
}

/** The upsert's update: the points added to a window still running, or a new window in its place. */
const addedUp = (now: number) =>
  sql`points = case when holder_rate_limits.expire is not null and holder_rate_limits.expire <= ${now}
                    then excluded.points else holder_rate_limits.points + excluded.points end,
      expire = case when holder_rate_limits.expire is not null and holder_rate_limits.expire <= ${now}
                    then excluded.expire else holder_rate_limits.expire end`;

/** Keys per SQLite statement: three variables a key stays far below its variable limit. */
const KEYS_PER_SQLITE_STATEMENT = 500;

/**
 * Adds each key's points to its window (as `addPoints` does for one), all or none, and answers
 * each key's window. On PostgreSQL it is one statement with its rows locked in key order, so it
 * needs no transaction of its own (which would hold the locks a round trip longer); on SQLite a
 * transaction only when the keys need more than one statement.
 */
function addAllPoints(
  store: Database<LimitsTables>,
  pending: readonly PendingPoints[],
  now: number,
): Promise<Map<string, StoredWindow>> {
  const oneStatement = store.dialect === "postgres" || pending.length <= KEYS_PER_SQLITE_STATEMENT;
  return oneStatement
    ? upsertAll(store.db, store.dialect, pending, now)
    : store.transaction((trx) => upsertAll(trx, store.dialect, pending, now));
}

async function upsertAll(
  db: Kysely<LimitsTables>,
  dialect: Database["dialect"],
  pending: readonly PendingPoints[],
  now: number,
): Promise<Map<string, StoredWindow>> {
  const expireOf = (entry: PendingPoints) => (entry.msDuration > 0 ? now + entry.msDuration : null);
  type Row = StoredWindow & { key: string };
  const rows: Row[] = [];
  if (dialect === "postgres") {
    // Asynchronous commit, as in addPoints. The rows come from arrays, ordered by key, so every
    // process locks the same keys in the same order.
    const query = sql<Row>`with async as (select set_config('synchronous_commit', 'off', true) as setting)
        insert into holder_rate_limits (key, points, expire)
        select key, points, expire
          from unnest(${pending.map((entry) => entry.rlKey)}::text[],
                      ${pending.map((entry) => entry.points)}::bigint[],
                      ${pending.map(expireOf)}::bigint[]) as pending(key, points, expire)
          where (select setting from async) = 'off'
          order by key
        on conflict (key) do update set ${addedUp(now)}
        returning key, points, expire`;
    rows.push(...(await query.execute(db)).rows);
  } else {
    for (let i = 0; i < pending.length; i += KEYS_PER_SQLITE_STATEMENT) {
      const values = pending
        .slice(i, i + KEYS_PER_SQLITE_STATEMENT)
        .map((entry) => sql`(${entry.rlKey}, ${entry.points}, ${expireOf(entry)})`);
      const query = sql<Row>`insert into holder_rate_limits (key, points, expire) values ${sql.join(values)}
          on conflict (key) do update set ${addedUp(now)}
          returning key, points, expire`;
      rows.push(...(await query.execute(db)).rows);
    }
  }
  return new Map(rows.map(({ key, points, expire }) => [key, { points, expire }]));
}

function checkRule(bucket: string, rule: LimitRule): void {
  if (!/^[a-z][a-z0-9_.-]{0,40}$/.test(bucket)) {
    throw new RangeError(`a limit bucket is a short lower-case name, not ${JSON.stringify(bucket)}`);
  }
  if (
    !Number.isInteger(rule.points) ||
    rule.points < 1 ||
    !Number.isInteger(rule.durationSeconds) ||
    rule.durationSeconds < 1
  ) {
    throw new RangeError(`the limit ${bucket} needs whole points ≥ 1 and durationSeconds ≥ 1`);
  }
}

export function createSharedLimiter(options: SharedLimiterOptions): SharedLimiter {
  const store = options.store as Database<LimitsTables>;
  const now = options.clock ?? Date.now;
  const hashKey = options.hashKey ?? ((key: string) => key);
  const limiters = new Map<string, DatabaseRateLimiter>();
  const rules = new Map<string, LimitRule>();
  for (const [bucket, rule] of Object.entries(options.rules)) {
    checkRule(bucket, rule);
    rules.set(bucket, { ...rule });
    limiters.set(bucket, new DatabaseRateLimiter({ ...rule, keyPrefix: bucket }, store, now));
  }

  async function purgeExpired(): Promise<number> {
    const result = await store.db
      .deleteFrom("holder_rate_limits")
      .where("expire", "is not", null)
      .where("expire", "<=", now())
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
  const every = options.purgeEveryMs ?? 5 * 60_000;
  const timer =
    every > 0
      ? setInterval(() => {
          purgeExpired().catch((error: Error) => options.onError?.(error));
        }, every)
      : undefined;
  timer?.unref();

  /** What an exact count answered, as the window the in-memory counts go on from. */
  const windowOf = (res: RateLimiterResType): StoredWindow => ({
    points: res.consumedPoints,
    expire: res.msBeforeNext < 0 ? null : now() + res.msBeforeNext,
  });
  const busyKeys = rememberedHashes(hashKey);
  const batched = createBatchedCounts({
    addAllPoints: (pending) => addAllPoints(store, pending, now()),
    now,
    ...(options.flushEveryMs === undefined ? {} : { flushEveryMs: options.flushEveryMs }),
    ...(options.onError === undefined ? {} : { onError: options.onError }),
  });

  return {
    async consume(bucket, key, points = 1) {
      const limiter = limiters.get(bucket);
      const rule = rules.get(bucket);
      if (limiter === undefined || rule === undefined)
        throw new RangeError(`no limit is set for ${JSON.stringify(bucket)}`);
      const busy = rule.points >= BATCHED_FROM_POINTS;
      // The MCP limits' keys are client addresses and sessions; an e-mail is never remembered.
      const hashed = busy && bucket.startsWith("mcp.") ? busyKeys.hash(key) : hashKey(key);
      const rlKey = limiter.getKey(hashed);
      if (busy) {
        const known = batched.consume(rlKey, rule.points, points);
        if (known !== undefined) return known;
      }
      const msDuration = rule.durationSeconds * 1000;
      try {
        const res = await limiter.consume(hashed, points);
        if (busy) batched.learn(rlKey, windowOf(res), msDuration);
        return { ok: true, remaining: res.remainingPoints };
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes) {
          if (busy) batched.learn(rlKey, windowOf(rejection), msDuration);
          return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)) };
        }
        options.onError?.(rejection as Error);
        return { ok: true, remaining: 0 };
      }
    },
    rule: (bucket) => rules.get(bucket),
    purgeExpired,
    async close() {
      if (timer !== undefined) clearInterval(timer);
      await batched.close();
    },
  };
}

/** Keyed hashes of the clients the busy limits see most: one per client, not one per call. */
const REMEMBERED_HASHES = 10_000;

/** `hashKey` remembered, forgotten all at once when `REMEMBERED_HASHES` are held. */
function rememberedHashes(hashKey: (key: string) => string): { hash(key: string): string } {
  const known = new Map<string, string>();
  return {
    hash(key) {
      let hashed = known.get(key);
      if (hashed === undefined) {
        if (known.size >= REMEMBERED_HASHES) known.clear();
        hashed = hashKey(key);
        known.set(key, hashed);
      }
      return hashed;
    },
  };
}
