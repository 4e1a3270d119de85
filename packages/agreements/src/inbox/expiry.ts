import type { InboxStore } from "./store.js";

/**
 * Inboxes that delete themselves when the job is done: a timer that, once per interval, deletes
 * every inbox whose `expiresAt` has come (with its messages, threads, nonces, waiting answers,
 * records and task bindings). The clock and the timer are injected, so expiry is tested without
 * sleeping; `runOnce` is the same sweep on demand.
 */

export interface ExpiryTimers {
  setInterval(fn: () => void, ms: number): unknown;
  clearInterval(handle: unknown): void;
}

export interface InboxExpiryOptions {
  readonly store: InboxStore;
  /** Epoch milliseconds (default `Date.now`). */
  readonly clock?: () => number;
  /** Default 60 s. */
  readonly intervalMs?: number;
  readonly timers?: ExpiryTimers;
  /** After each sweep that deleted something. */
  readonly onDeleted?: (addresses: readonly string[]) => void;
  /** A sweep failed (the next one tries again). */
  readonly onError?: (error: unknown) => void;
}

export interface InboxExpiry {
  /** One sweep now; resolves with the deleted addresses. Sweeps never overlap. */
  runOnce(): Promise<string[]>;
  stop(): void;
}

const nodeTimers: ExpiryTimers = {
  setInterval: (fn, ms) => {
    const handle = setInterval(fn, ms);
    handle.unref();
    return handle;
  },
  clearInterval: (handle) => clearInterval(handle as NodeJS.Timeout),
};

export function startInboxExpiry(options: InboxExpiryOptions): InboxExpiry {
  const clock = options.clock ?? Date.now;
  const intervalMs = options.intervalMs ?? 60_000;
  if (!Number.isInteger(intervalMs) || intervalMs < 1) {
    throw new RangeError("intervalMs must be a whole number of milliseconds, at least 1");
  }
  const timers = options.timers ?? nodeTimers;
  let running: Promise<string[]> | undefined;
  const runOnce = (): Promise<string[]> => {
    running ??= options.store
      .deleteExpired(clock())
      .then((deleted) => {
        if (deleted.length > 0) options.onDeleted?.(deleted);
        return deleted;
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  };
  const handle = timers.setInterval(() => {
    runOnce().catch((error: unknown) => options.onError?.(error));
  }, intervalMs);
  return { runOnce, stop: () => timers.clearInterval(handle) };
}
