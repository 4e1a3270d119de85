import { createLeadership, type Database, type Leadership } from "@doorbell/store";

/**
 * The holder's periodic work (expiry, push sweep, digests, purges) in one process at a time across
 * every process on the database. Each process asks for leadership every
 * `ttlMs / 2`; the leader runs the work at once when it becomes leader and then every
 * `intervalMs`. A leader that dies stops renewing: another process takes over once its lease
 * expired, within `1.5 × ttlMs` (45 s by default). `stop()` waits for a running pass and gives the
 * lease up, so a graceful shutdown hands over at once.
 */
export interface BackgroundOptions {
  store: Database;
  /** One pass of the work; its failures are reported to `onError` and the next pass runs as usual. */
  work: () => Promise<void>;
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
      await options.work();
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
