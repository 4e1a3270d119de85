import { randomBytes } from "node:crypto";
import { sql } from "kysely";
import { StoreError } from "./errors.js";
import type { Database } from "./handle.js";
import { defineMigrations } from "./migrations.js";

/**
 * Leadership over a named piece of background work, shared by every process on one database:
 * expiry, sweeps, purges and digests run in one process at a time.
 *
 * A lease row per name, not a PostgreSQL advisory lock: it works the same on both engines, and
 * the leader need not keep a connection of its own. The leader renews the row while it runs; a
 * leader that dies stops renewing, and once its lease has expired the next process to ask takes
 * over. Ask every `ttlMs / 2` and a dead leader's work resumes within `1.5 × ttlMs`.
 *
 * A pass of work may last longer than a lease: `keep` renews the lease every `ttlMs / 4` while
 * the pass runs, and tells the pass (its signal) once this process can no longer be sure it leads.
 * What holds is "at most one leader at a time, as far as the clocks agree", not mutual exclusion:
 * a leader frozen for longer than a lease (a long GC pause, a stalled query) resumes the step it
 * was in before it can notice. So the work must claim what it changes row by row (a conditional
 * update, a compare-and-set), and then the worst case of two passes at once is work done twice
 * and found already done, never a row changed or a mail sent twice.
 */
export const leadershipMigrations = defineMigrations("store-leadership", [
  {
    version: 1,
    name: "leases",
    async up(db, { types }) {
      await db.schema
        .createTable("store_leadership")
        .addColumn("name", "text", (c) => c.primaryKey())
        .addColumn("owner", "text", (c) => c.notNull())
        .addColumn("expires_at", types.timestamp, (c) => c.notNull())
        .execute();
    },
  },
]);

export interface LeadershipOptions {
  /** What is led, e.g. "holder.background". */
  name: string;
  /** How long a lease lasts without renewal (default 30 s). */
  ttlMs?: number;
  /** Names this process (default random). */
  owner?: string;
  clock?: () => number;
}

export interface Leadership {
  readonly owner: string;
  readonly ttlMs: number;
  /** Takes or renews the lease; true while this process leads. */
  hold(): Promise<boolean>;
  /**
   * Runs one pass of `work` as the leader (after `hold()` said so), renewing the lease every
   * `ttlMs / 4` while it runs. The signal given to `work` aborts, with ERR_STORE_LEADERSHIP_LOST,
   * once a renewal finds another owner, or once renewals failed (`onError` hears why) until less
   * than a third of the lease is left. The work checks it before each step or batch.
   */
  keep<T>(work: (signal: AbortSignal) => Promise<T>, onError?: (error: Error) => void): Promise<T>;
  /** Gives the lease up at once (graceful shutdown), so another process need not wait for it to expire. */
  release(): Promise<void>;
}

export function createLeadership(store: Database, options: LeadershipOptions): Leadership {
  const ttlMs = options.ttlMs ?? 30_000;
  if (!(Number.isSafeInteger(ttlMs) && ttlMs >= 1_000)) {
    throw new StoreError("ERR_STORE_CONFIG", "a leadership lease lasts at least 1000 ms");
  }
  const owner = options.owner ?? `ldr_${randomBytes(9).toString("base64url")}`;
  const clock = options.clock ?? Date.now;
  const { name } = options;
  const renewEveryMs = Math.floor(ttlMs / 4);
  /** Until when the lease is ours, by this process's clock: the last successful hold plus ttlMs. */
  let heldUntil = Number.NEGATIVE_INFINITY;

  async function hold(): Promise<boolean> {
    const now = clock();
    // One statement on both engines: it inserts the row, renews our own lease, or takes an
    // expired one. Concurrent callers serialise on the row: only one of them gets it back.
    const { rows } = await sql<{ owner: string }>`
      insert into store_leadership (name, owner, expires_at) values (${name}, ${owner}, ${now + ttlMs})
      on conflict (name) do update set owner = excluded.owner, expires_at = excluded.expires_at
      where store_leadership.owner = excluded.owner or store_leadership.expires_at <= ${now}
      returning owner`.execute(store.db);
    const held = rows[0]?.owner === owner;
    heldUntil = held ? now + ttlMs : Number.NEGATIVE_INFINITY;
    return held;
  }

  async function keep<T>(
    work: (signal: AbortSignal) => Promise<T>,
    onError?: (error: Error) => void,
  ): Promise<T> {
    const controller = new AbortController();
    const lose = (why: string) =>
      controller.abort(
        new StoreError("ERR_STORE_LEADERSHIP_LOST", `this process no longer leads ${name}: ${why}`),
      );
    // Less than a third of the lease left unrenewed (two renewals in a row failed or hang): give
    // up now, well before it can run out and another process takes over. The threshold sits
    // between two beats, so a timer firing a little late decides nothing.
    const runningOut = () => heldUntil - clock() < ttlMs / 3;
    if (runningOut()) lose("its lease is not held");
    let renewing = false;
    const beat = async () => {
      if (controller.signal.aborted) return;
      // Asked before renewing, so a renewal that hangs (a stalled database) counts as failed.
      if (runningOut()) return lose("the lease could not be renewed in time");
      if (renewing) return;
      renewing = true;
      try {
        if (!(await hold())) lose("another process took the lease");
      } catch (error) {
        onError?.(error as Error);
      } finally {
        renewing = false;
      }
    };
    const timer = setInterval(() => void beat(), renewEveryMs);
    timer.unref?.();
    try {
      return await work(controller.signal);
    } finally {
      clearInterval(timer);
    }
  }

  return {
    owner,
    ttlMs,
    hold,
    keep,
    async release() {
      await sql`delete from store_leadership where name = ${name} and owner = ${owner}`.execute(store.db);
    },
  };
}
