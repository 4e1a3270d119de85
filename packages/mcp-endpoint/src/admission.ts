/**
 * Admission for MCP requests in one process: at most `concurrent` are served at once, up to
 * `waiting` more wait their turn in arrival order, and any beyond that are refused at once.
 *
 * Why: a process that takes every request as it comes serves them all slower together. In the
 * soak, 400 pulls in flight on three processes kept ~130 requests alive per process for
 * seconds each; with a few served at a time each finishes quickly, and the soak answered about
 * 30 % more (114 → 148 pulls/s on two cores). A waiting request holds only its parsed body.
 *
 * A place is one JSON-RPC request: a batch takes as many as it carries requests, all at once or
 * none, or it would do the work of many for the price of one.
 *
 * While the JavaScript heap is over its bound (heap-bound.ts) no new request is admitted either.
 */
import { chooseHeapBound, type HeapGauge, heapGauge } from "./heap-bound.js";

export interface Admission {
  /**
   * Takes `places` places at once (one per JSON-RPC request the POST carries; default 1), in
   * arrival order. Resolves with their release (call it once the work they admitted is done; later
   * calls do nothing), or with undefined when they cannot be had now and the waiting room has no
   * room for them: the caller refuses. More places than `concurrent` can never be had (RangeError).
   */
  enter(places?: number): Promise<(() => void) | undefined>;
  /** Whether `enter(places)` would refuse now (counting nothing): for a caller that hands the request on. */
  wouldRefuse(places?: number): boolean;
  /** Places taken now: requests being served. */
  readonly active: number;
  /** Places waited for: requests waiting for a turn. */
  readonly queued: number;
  /** Requests refused since the start because the waiting room was full or the heap over its bound. */
  readonly refused: number;
  /** Of those, the ones refused because the heap was over its bound. */
  readonly refusedForHeap: number;
  /** What it was made with. */
  readonly limits: Readonly<AdmissionLimits>;
}

export interface AdmissionLimits {
  concurrent: number;
  waiting: number;
  /**
   * The heap size in bytes past which no new request is admitted (heap-bound.ts); Infinity for
   * none. Chosen from the machine when absent.
   */
  heapBound?: number;
}

/** A process's default: enough to keep two cores busy, and a queue that absorbs a burst. */
export const DEFAULT_ADMISSION: Readonly<AdmissionLimits> = Object.freeze({ concurrent: 32, waiting: 1024 });

/** `heap`: how the heap is looked at (the process's own, against the bound, unless given). */
export function createAdmission(limits: AdmissionLimits, heap?: HeapGauge): Admission {
  const { concurrent, waiting } = limits;
  const heapBound = limits.heapBound ?? chooseHeapBound();
  if (!Number.isInteger(concurrent) || concurrent < 1) {
    throw new RangeError("concurrent requests must be a whole number of at least 1");
  }
  if (!Number.isInteger(waiting) || waiting < 0) {
    throw new RangeError("waiting requests must be a whole number of at least 0");
  }
  if (typeof heapBound !== "number" || !(heapBound > 0)) {
    throw new RangeError("the heap bound must be a number of bytes above 0 (Infinity for none)");
  }
  const gauge = heap ?? (Number.isFinite(heapBound) ? heapGauge(heapBound) : undefined);
  let active = 0;
  let queued = 0;
  let refused = 0;
  let refusedForHeap = 0;
  const turns: { places: number; admit: () => void }[] = [];

  // Finished work hands its places straight to the oldest waiting request once enough are free,
  // so a newcomer never overtakes a waiting one, not even a small one behind a large batch.
  const admitWaiting = () => {
    for (let next = turns[0]; next !== undefined && active + next.places <= concurrent; next = turns[0]) {
      turns.shift();
      queued -= next.places;
      active += next.places;
      next.admit();
    }
  };
  const releaser = (places: number) => {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      active -= places;
      admitWaiting();
    };
  };

  return {
    async enter(places = 1) {
      if (!Number.isInteger(places) || places < 1 || places > concurrent) {
        throw new RangeError(`a request takes from 1 to ${concurrent} places, not ${places}`);
      }
      if (gauge?.over()) {
        refused += places;
        refusedForHeap += places;
        return undefined;
      }
      if (turns.length === 0 && active + places <= concurrent) {
        active += places;
        return releaser(places);
      }
      if (queued + places > waiting) {
        refused += places;
        return undefined;
      }
      queued += places;
      await new Promise<void>((admit) => turns.push({ places, admit }));
      return releaser(places);
    },
    wouldRefuse(places = 1) {
      if (gauge?.over()) return true;
      return !(turns.length === 0 && active + places <= concurrent) && queued + places > waiting;
    },
    get active() {
      return active;
    },
    get queued() {
      return queued;
    },
    get refused() {
      return refused;
    },
    get refusedForHeap() {
      return refusedForHeap;
    },
    limits: Object.freeze({ concurrent, waiting, heapBound }),
  };
}
