/**
 * The process's own metrics: its memory at each scrape, and the heap it keeps alive after each
 * full garbage collection.
 */
import { constants, PerformanceObserver } from "node:perf_hooks";
import { getHeapStatistics } from "node:v8";
import { Gauge, type Registry } from "prom-client";

let heapAfterMajorGc: number | undefined;
let gcObserver: PerformanceObserver | undefined;

/**
 * Starts noting, once per process, the heap in use right after each full (mark-compact) garbage
 * collection: what the program keeps alive, without the garbage that the heap in use also counts
 * between collections, so it grows only with what is kept: more work in flight, or a leak. Called
 * when /metrics is turned on.
 */
export function watchHeapAfterGc(): void {
  if (gcObserver !== undefined) return;
  gcObserver = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const { detail } = entry as PerformanceEntry & { detail?: { kind?: number } };
      if (detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) {
        heapAfterMajorGc = getHeapStatistics().used_heap_size;
      }
    }
  });
  gcObserver.observe({ entryTypes: ["gc"] });
}

/**
 * The process's memory at each scrape, under the names Prometheus' Node.js clients use, so the
 * usual dashboards read them; and the heap kept after the last full collection. Sampled only
 * when scraped: nothing else runs between scrapes.
 */
export function processMemoryGauges(registers: Registry[]): void {
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
    name: "doorbell_heap_used_after_major_gc_bytes",
    help: "JavaScript heap in use right after the last full garbage collection (what is kept alive).",
    registers,
    collect() {
      if (heapAfterMajorGc !== undefined) this.set(heapAfterMajorGc);
    },
  });
}
