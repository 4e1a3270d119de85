/**
 * The process's own metrics: its memory at each scrape, the heap it keeps alive after each full
 * garbage collection, the time its collections paused it, and how late its event loop ran.
 */
import {
  constants,
  type IntervalHistogram,
  monitorEventLoopDelay,
  PerformanceObserver,
} from "node:perf_hooks";
import { getHeapStatistics } from "node:v8";
import { Counter, Gauge, type Registry } from "prom-client";

let heapAfterMajorGc: number | undefined;
let gcObserver: PerformanceObserver | undefined;
let loopDelay: IntervalHistogram | undefined;
/** Seconds and count of the collections so far, by kind, under prom-client's kind names. */
const gcPauses = new Map<string, { seconds: number; count: number }>();
const GC_KINDS = new Map<number, string>([
  [constants.NODE_PERFORMANCE_GC_MAJOR, "major"],
  [constants.NODE_PERFORMANCE_GC_MINOR, "minor"],
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL, "incremental"],
  [constants.NODE_PERFORMANCE_GC_WEAKCB, "weakcb"],
]);

/**
 * Starts watching the runtime, once per process: the heap in use right after each full
 * (mark-compact) garbage collection, what the program keeps alive without the garbage that the
 * heap in use also counts between collections, so it grows only with what is kept (more work in
 * flight, or a leak); the pause of every collection; and the event loop's delay, sampled every
 * 10 ms. A request's latency that none of its database statements explains is usually one of the
 * last two. Called when /metrics is turned on.
 */
export function watchRuntime(): void {
  if (gcObserver !== undefined) return;
  gcObserver = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const { detail } = entry as PerformanceEntry & { detail?: { kind?: number } };
      const kind = GC_KINDS.get(detail?.kind ?? -1) ?? "other";
      const pauses = gcPauses.get(kind) ?? { seconds: 0, count: 0 };
      pauses.seconds += entry.duration / 1000;
      pauses.count += 1;
      gcPauses.set(kind, pauses);
      if (detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) {
        heapAfterMajorGc = getHeapStatistics().used_heap_size;
      }
    }
  });
  gcObserver.observe({ entryTypes: ["gc"] });
  loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
}

/**
 * The process's memory at each scrape, under the names Prometheus' Node.js clients use, so the
 * usual dashboards read them; the heap kept after the last full collection; and what
 * `watchRuntime` noted of the event loop and the collections. Read only when scraped.
 */
export function processRuntimeMetrics(registers: Registry[]): void {
  const memory: [name: string, help: string, read: (m: NodeJS.MemoryUsage) => number][] = [
    ["process_resident_memory_bytes", "Resident memory size in bytes.", (m) => m.rss],
    ["nodejs_heap_size_total_bytes", "Process heap size from Node.js in bytes.", (m) => m.heapTotal],
    ["nodejs_heap_size_used_bytes", "Process heap size used from Node.js in bytes.", (m) => m.heapUsed],
    ["nodejs_external_memory_bytes", "Node.js external memory size in bytes.", (m) => m.external],
  ];
  for (const [name, help, read] of memory) {
    new Gauge({
      name,
      help,
      registers,
      collect() {
        this.set(read(process.memoryUsage()));
      },
    });
  }
  new Gauge({
    name: "nodejs_eventloop_lag_seconds",
    help: "How late the event loop ran since the last scrape: its 99th percentile and its maximum (quantile 1).",
    labelNames: ["quantile"],
    registers,
    collect() {
      if (loopDelay === undefined || loopDelay.count === 0) return;
      this.set({ quantile: "0.99" }, loopDelay.percentile(99) / 1e9);
      this.set({ quantile: "1" }, loopDelay.max / 1e9);
      // Each scrape reads the delay since the one before.
      loopDelay.reset();
    },
  });
  const collections: [
    suffix: string,
    help: string,
    read: (p: { seconds: number; count: number }) => number,
  ][] = [
    ["seconds_total", "Time garbage collections paused the process, by kind.", (p) => p.seconds],
    ["total", "Garbage collections, by kind.", (p) => p.count],
  ];
  for (const [suffix, help, read] of collections) {
    new Counter({
      name: `nodejs_gc_pause_${suffix}`,
      help,
      labelNames: ["kind"],
      registers,
      collect() {
        this.reset();
        for (const [kind, pauses] of gcPauses) this.inc({ kind }, read(pauses));
      },
    });
  }
  new Gauge({
    name: "doorbell_heap_used_after_major_gc_bytes",
    help: "JavaScript heap in use right after the last full garbage collection (what is kept alive).",
    registers,
    collect() {
      if (heapAfterMajorGc !== undefined) this.set(heapAfterMajorGc);
    },
  });
}
