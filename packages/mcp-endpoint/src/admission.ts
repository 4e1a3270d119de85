/**
 * Admission for MCP requests in one process: at most `concurrent` are served at once, up to
 * `waiting` more wait their turn in arrival order, and any beyond that are refused at once.
 *
 * Why: a process that takes every request as it comes serves them all slower together. In the
 * soak, 400 pulls in flight on three processes kept ~130 requests alive per process for
 * seconds each; with a few served at a time each finishes quickly, and the soak answered about
 * 30 % more (114 → 148 pulls/s on two cores). A waiting request holds only its parsed body.
 */
export interface Admission {
  /**
   * Resolves with the request's release (call it once the answer is ready; later calls do
   * nothing), or with undefined when `waiting` requests already wait: the caller refuses.
   */
  enter(): Promise<(() => void) | undefined>;
  /** Requests being served now. */
  readonly active: number;
  /** Requests waiting for a turn. */
  readonly queued: number;
  /** Requests refused since the start because the queue was full. */
  readonly refused: number;
  /** What it was made with. */
  readonly limits: Readonly<AdmissionLimits>;
}

export interface AdmissionLimits {
  concurrent: number;
  waiting: number;
}

/** A process's default: enough to keep two cores busy, and a queue that absorbs a burst. */
export const DEFAULT_ADMISSION: Readonly<AdmissionLimits> = Object.freeze({ concurrent: 32, waiting: 1024 });

export function createAdmission({ concurrent, waiting }: AdmissionLimits): Admission {
  if (!Number.isInteger(concurrent) || concurrent < 1) {
    throw new RangeError("concurrent requests must be a whole number of at least 1");
  }
  if (!Number.isInteger(waiting) || waiting < 0) {
    throw new RangeError("waiting requests must be a whole number of at least 0");
  }
  let active = 0;
  let refused = 0;
  const turns: (() => void)[] = [];

  // A finished request hands its place straight to the oldest waiting one, so `active` never
  // dips below the limit while requests wait (a newcomer cannot overtake them).
  const releaser = () => {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = turns.shift();
      if (next === undefined) active--;
      else next();
    };
  };

  return {
    async enter() {
      if (active < concurrent) {
        active++;
        return releaser();
      }
      if (turns.length >= waiting) {
        refused++;
        return undefined;
      }
      await new Promise<void>((resolve) => turns.push(resolve));
      return releaser();
    },
    get active() {
      return active;
    },
    get queued() {
      return turns.length;
    },
    get refused() {
      return refused;
    },
    limits: Object.freeze({ concurrent, waiting }),
  };
}
