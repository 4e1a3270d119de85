/**
 * Time, injected: poll intervals, refresh deadlines and heartbeat windows are tested without
 * waiting for them. `sleep` resolves after `ms` or as soon as `signal` aborts (never rejects).
 */
export interface Timers {
  /** Milliseconds since the epoch. */
  now(): number;
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

export const systemTimers: Timers = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve) => {
      if (signal.aborted) return resolve();
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        resolve();
      };
      // Node caps timers at 2^31-1 ms; longer waits simply wake early and are re-checked by callers.
      const timer = setTimeout(done, Math.min(Math.max(0, ms), 2_147_483_647));
      signal.addEventListener("abort", done, { once: true });
    }),
};
