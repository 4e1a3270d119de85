import { createLeadership, type Database, type Leadership } from "@doorbell/store";

/**
 * The holder's periodic work (expiry, push sweep, digests, purges) in one process at a time across
 * every process on the database. Each process asks for leadership every
 * `ttlMs / 2`; the leader runs the work at once when it becomes leader and then every
 * `intervalMs`. While a pass runs, its lease is renewed every `ttlMs / 4` (a pass may outlast a
 * lease, and nobody takes over from a leader that is still working); the pass is handed a signal
 * that aborts once this process may no longer lead, and it stops before its next step or batch.
 * A leader that dies stops renewing: another process takes over once its lease expired, within
 * `1.5 × ttlMs` (45 s by default). `stop()` waits for a running pass and gives the lease up, so a
 * graceful shutdown hands over at once. What two overlapping passes may do (a leader frozen past
 * its lease) is bounded by the work claiming its rows: see the store's leadership.ts.
 */
export interface BackgroundOptions {
  store: Database;
  /**
   * One pass of the work; its failures are reported to `onError` and the next pass runs as usual.
   * `signal` aborts once this process may no longer lead: check it before each step or batch.
   */
  work: (signal: AbortSignal) => Promise<void>;
  intervalMs: number;
  ttlMs?: number;
  onError: (error: Error) => void;
  clock?: () => number;
}

export interface Background {
  readonly leadership: Leadership;
  /** Whether this process led at its last check. */
  leading(): boolean;
  /** Runs one check (and the work when due); resolves when it is done. For tests and startup. */
  tick(): Promise<void>;
  stop(): Promise<void>;
}

export function startBackground(options: BackgroundOptions): Background {
  const clock = options.clock ?? Date.now;
  const leadership = createLeadership(options.store, {
    name: "holder.background",
    ...(options.ttlMs === undefined ? {} : { ttlMs: options.ttlMs }),
    clock,
  });
  let leader = false;
  let lastRun = Number.NEGATIVE_INFINITY;
  let running: Promise<void> | undefined;
  let stopped = false;

  const pass = async () => {
    const was = leader;
    leader = await leadership.hold();
    if (!leader) return;
    // A new leader runs at once: the previous one may have died in the middle of its interval.
    if (!was || clock() - lastRun >= options.intervalMs) {
      lastRun = clock();
      await leadership.keep(async (signal) => {
        signal.addEventListener("abort", () => {
          leader = false;
        });
        await options.work(signal);
      }, options.onError);
    }
  };
  const tick = () => {
    running ??= pass()
      .catch((error: unknown) => options.onError(error as Error))
      .finally(() => {
        running = undefined;
      });
    return running;
  };
  const timer = setInterval(
    () => {
      if (!stopped) void tick();
    },
    Math.min(options.intervalMs, leadership.ttlMs / 2),
  );
  timer.unref();

  return {
    leadership,
    leading: () => leader,
    tick,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
      if (leader) await leadership.release().catch((error: unknown) => options.onError(error as Error));
      leader = false;
    },
  };
}
