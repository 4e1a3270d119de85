/**
 * Fair delivery: at most `perHost` subscriptions of one destination host are processed at once by
 * one worker, and at most `perHost` more wait for one of their slots. A subscription has at most
 * one attempt in flight, so this also bounds the attempts in flight to that host; one host that
 * hangs holds no more than `perHost` of the worker's slots.
 */
import type { EngineContext } from "./context.js";
import { endpointOf } from "./context.js";
import type { SubscriptionRow } from "./schema.js";

/** The destination host of a subscription, lower-cased, or undefined when its endpoint is purged. */
export function destinationHost(
  ctx: Pick<EngineContext, "sealer">,
  sub: SubscriptionRow,
): string | undefined {
  if (sub.url_sealed === null) return undefined;
  // The host alone (not the port): one machine behind several ports is still one machine.
  return new URL(endpointOf(ctx, sub)).hostname.toLowerCase();
}

export interface HostGate {
  /** Takes a slot of `host` if one is free; undefined (no endpoint) always gets through. */
  tryEnter(host: string | undefined): boolean;
  /** Waits for a slot of `host` (for a one-shot pass that already holds the lease). */
  enter(host: string | undefined): Promise<void>;
  /**
   * Waits up to `ms` for a slot of `host`, behind at most `perHost` others: true once it holds one,
   * false when that queue was full or the time ran out (it then holds nothing).
   */
  waitFor(host: string | undefined, ms: number): Promise<boolean>;
  leave(host: string | undefined): void;
  /** Subscriptions of `host` in hand now. */
  inFlight(host: string): number;
}

export function createHostGate(perHost: number): HostGate {
  const counts = new Map<string, number>();
  const waiters = new Map<string, Array<() => void>>();
  const tryEnter = (host: string | undefined): boolean => {
    if (host === undefined) return true;
    const count = counts.get(host) ?? 0;
    if (count >= perHost) return false;
    counts.set(host, count + 1);
    return true;
  };
  /** The waiters of `host`, in order; `leave` drops the list once it is empty. */
  const queueOf = (host: string): Array<() => void> => {
    let queue = waiters.get(host);
    if (queue === undefined) {
      queue = [];
      waiters.set(host, queue);
    }
    return queue;
  };
  return {
    tryEnter,
    enter(host) {
      if (host === undefined || tryEnter(host)) return Promise.resolve();
      return new Promise<void>((resolve) => queueOf(host).push(resolve));
    },
    waitFor(host, ms) {
      if (host === undefined || tryEnter(host)) return Promise.resolve(true);
      const queue = queueOf(host);
      if (queue.length >= perHost) return Promise.resolve(false);
      return new Promise<boolean>((resolve) => {
        // Handed a slot, it stops the timer at once: the timer fires only while it still waits.
        const handOver = () => {
          clearTimeout(timer);
          resolve(true);
        };
        const timer = setTimeout(() => {
          queue.splice(queue.indexOf(handOver), 1);
          if (queue.length === 0) waiters.delete(host);
          resolve(false);
        }, ms);
        timer.unref();
        queue.push(handOver);
      });
    },
    leave(host) {
      if (host === undefined) return;
      const next = waiters.get(host)?.shift();
      // The slot passes straight to the next waiter: the count stays.
      if (next) return next();
      waiters.delete(host);
      const count = (counts.get(host) ?? 1) - 1;
      if (count <= 0) counts.delete(host);
      else counts.set(host, count);
    },
    inFlight: (host) => counts.get(host) ?? 0,
  };
}
