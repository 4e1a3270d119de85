/**
 * The heap bound: the JavaScript heap size past which a process admits no new MCP request (503
 * and Retry-After, as when its waiting room is full) until it is back under.
 *
 * Why: V8 close to its heap limit spends its time in full collections and then ends the process,
 * with every request in hand. Refusing new work first lets the work in hand finish and its garbage
 * go; the load balancer's other processes, or the client's retry, take the rest.
 *
 * Node cannot change V8's heap limit once running, so the bound sits under it. Chosen from the
 * machine unless the operator gives one: 85 % of V8's heap limit (which Node sizes from the
 * machine's memory, or `--max-old-space-size` sets), and at most half the memory this process may
 * use (its cgroup's limit where there is one, else the machine's), so a process in a small
 * container stops taking work before the kernel ends it.
 */
import os from "node:os";
import v8 from "node:v8";

/** The share of V8's own heap limit a chosen bound takes. */
export const HEAP_BOUND_OF_V8_LIMIT = 0.85;
/** The share of the process's memory (cgroup limit, else the machine's) a chosen bound takes at most. */
export const HEAP_BOUND_OF_MEMORY = 0.5;
/** How often the heap is looked at, at most (a look costs about a quarter of a microsecond). */
const LOOK_EVERY_MS = 100;
/** Admitting again below 90 % of the bound, so that one collection does not flip it back and forth. */
const RESUME_BELOW = 0.9;

/** What a bound is chosen from. */
export interface MachineMemory {
  /** V8's heap limit in bytes. */
  heapLimit: number;
  /** The memory this process may use in bytes: its cgroup's limit, else the machine's. */
  memory: number;
}

export function machineMemory(): MachineMemory {
  const total = os.totalmem();
  // Without a cgroup limit Node reports a huge number (2^64) or 0.
  const constrained = process.constrainedMemory?.() ?? 0;
  return {
    heapLimit: v8.getHeapStatistics().heap_size_limit,
    memory: constrained > 0 && constrained < total ? constrained : total,
  };
}

/** The bound a process takes when the operator gives none, in bytes. */
export function chooseHeapBound(machine: MachineMemory = machineMemory()): number {
  return Math.floor(
    Math.min(machine.heapLimit * HEAP_BOUND_OF_V8_LIMIT, machine.memory * HEAP_BOUND_OF_MEMORY),
  );
}

export interface HeapGauge {
  /** Whether the heap is over the bound now (looked at most every 100 ms). */
  over(): boolean;
}

/** Watches the heap against `bound` bytes; `used` and `now` are the process's unless given. */
export function heapGauge(
  bound: number,
  options: { used?: () => number; now?: () => number } = {},
): HeapGauge {
  const used = options.used ?? (() => v8.getHeapStatistics().used_heap_size);
  const now = options.now ?? (() => performance.now());
  let lookedAt = Number.NEGATIVE_INFINITY;
  let over = false;
  return {
    over() {
      const at = now();
      if (at - lookedAt < LOOK_EVERY_MS) return over;
      lookedAt = at;
      const bytes = used();
      over = over ? bytes > bound * RESUME_BELOW : bytes > bound;
      return over;
    },
  };
}
