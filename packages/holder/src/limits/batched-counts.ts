/**
 * Counts of a busy limit kept in this process between writes.
 *
 * A limit such as 300 tool calls a minute is consulted on every MCP call; writing each call to the
 * database (a write transaction and its commit) cost more than the empty pull it guards. So once a
 * key's window is known here — its first call in the window is counted in the database at once,
 * which also reads what other processes counted — its further calls are counted in memory and
 * added to the shared row every `flushEveryMs` (one statement for every key that moved). Each
 * flush reads the shared total back, so what the other processes counted is seen within one flush.
 *
 * What that costs: between two flushes a process does not see the other processes' new calls, so
 * a client spread over N processes can exceed a limit by what N − 1 processes admit in one flush
 * interval. That is why only limits of at least BATCHED_FROM_POINTS calls per window are counted
 * this way; the mail and registration limits (a few per hour) are written on every call.
 */

/** The smallest limit, in calls per window, that is counted in memory between writes. */
export const BATCHED_FROM_POINTS = 100;
/** Keys tracked at most; past it a new key is counted in the database on every call. */
const MAX_KEYS = 50_000;

export interface StoredWindow {
  points: number;
  expire: number | null;
}

/** Calls of one key counted here, to be added to its window in the database. */
export interface PendingPoints {
  rlKey: string;
  points: number;
  msDuration: number;
}

/**
 * Adds every key's points to its window in the database, in key order, all or none; answers each
 * key's window.
 */
export type AddAllPoints = (pending: readonly PendingPoints[]) => Promise<Map<string, StoredWindow>>;

interface Window {
  /** The shared total as last read from the database, this process's flushed calls included. */
  shared: number;
  /** Counted here and not yet written. */
  pending: number;
  /** Epoch ms the window ends. */
  expire: number;
  msDuration: number;
}

export type BatchedVerdict = { ok: true; remaining: number } | { ok: false; retryAfterSeconds: number };

export interface BatchedCounts {
  /** The verdict from memory, or undefined when the key's window is not known here (count it exactly). */
  consume(rlKey: string, limit: number, points: number): BatchedVerdict | undefined;
  /** What an exact count in the database answered: the key's window from now on. */
  learn(rlKey: string, stored: StoredWindow, msDuration: number): void;
  /** Writes what is pending now (also done every flush interval, and by close). */
  flush(): Promise<void>;
  close(): Promise<void>;
}

export function createBatchedCounts(options: {
  addAllPoints: AddAllPoints;
  now: () => number;
  flushEveryMs?: number;
  onError?: (error: Error) => void;
}): BatchedCounts {
  const { addAllPoints, now } = options;
  const windows = new Map<string, Window>();
  let flushing: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;

  /**
   * One statement for every key with calls pending; each window then holds the shared total. Its
   * rows are locked in key order, the same in every process, so two processes flushing the same
   * keys wait for each other instead of deadlocking (PostgreSQL would end one after its deadlock
   * timeout, a second in which those rows stay locked), and only for one statement.
   */
  async function writePending(): Promise<void> {
    const at = now();
    // Calls of a window that has ended count for nothing now: written, they would count against
    // the key's next window.
    for (const window of windows.values()) if (window.expire <= at) window.pending = 0;
    const moved = [...windows].filter(([, window]) => window.pending > 0);
    if (moved.length === 0) return;
    const taken = moved.map(([, window]) => window.pending);
    for (const [, window] of moved) window.pending = 0;
    try {
      const pending = moved.map(([rlKey, window], index) => ({
        rlKey,
        points: taken[index] as number,
        msDuration: window.msDuration,
      }));
      const totals = await addAllPoints(pending);
      for (const [rlKey, window] of moved) {
        const total = totals.get(rlKey);
        if (total === undefined) continue;
        window.shared = Number(total.points);
        if (total.expire !== null) window.expire = Number(total.expire);
      }
    } catch (error) {
      // Not written: count them again with the next flush (a limit must not fail with the database).
      for (const [index, [, window]] of moved.entries()) window.pending += taken[index] as number;
      options.onError?.(error as Error);
    }
  }

  function flush(): Promise<void> {
    flushing ??= writePending().finally(() => {
      flushing = undefined;
      // Ended windows are forgotten: the next call counts exactly and learns the new one.
      const at = now();
      for (const [rlKey, window] of windows) if (window.expire <= at) windows.delete(rlKey);
    });
    return flushing;
  }

  function schedule(): void {
    if (timer !== undefined) return;
    timer = setTimeout(() => {
      timer = undefined;
      flush().catch(() => {});
    }, options.flushEveryMs ?? 100);
    timer.unref();
  }

  return {
    consume(rlKey, limit, points) {
      const window = windows.get(rlKey);
      const at = now();
      if (window === undefined || window.expire <= at) return undefined;
      const total = window.shared + window.pending + points;
      if (total > limit)
        return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((window.expire - at) / 1000)) };
      window.pending += points;
      schedule();
      return { ok: true, remaining: limit - total };
    },
    learn(rlKey, stored, msDuration) {
      if (stored.expire === null) return;
      const known = windows.get(rlKey);
      if (known === undefined && windows.size >= MAX_KEYS) return;
      const expire = Number(stored.expire);
      windows.set(rlKey, {
        shared: Number(stored.points),
        // Calls pending for this same window stay; those of a window that ended are not its.
        pending: known !== undefined && known.expire === expire ? known.pending : 0,
        expire,
        msDuration,
      });
    },
    flush,
    async close() {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      // A flush in flight took what was pending when it began: what came since needs one more.
      await flushing;
      await flush();
    },
  };
}
