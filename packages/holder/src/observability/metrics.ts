/**
 * The holder's Prometheus metrics (issue #17): MCP calls by tool, outcome and latency, mails sent,
 * catalogue imports, and HTTP requests by route shape — beside the delivery engine's own registry
 * (deliveries by outcome and category, queue depth, age of the oldest waiting doorbell).
 *
 * Numbers only. A label is one of a few fixed words, never a URL, path, host, secret, contact or
 * code: tool names and outcomes are checked against a small shape and a cap on distinct values,
 * so a caller cannot grow the label set without bound.
 */
import { constants, PerformanceObserver } from "node:perf_hooks";
import { getHeapStatistics } from "node:v8";
import type { Admission } from "@doorbell/mcp-endpoint";
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { Mailer } from "../mail/mailer.js";
import type { OfferService } from "../model/services.js";

export interface HolderMetrics {
  readonly registry: Registry;
  /**
   * One MCP tool call: `tool` is the tool's name (`intent_publish`…), `outcome` one word
   * (`ok`, `tool_error`, `refused`, `failed`…), `seconds` how long the call took.
   */
  observeToolCall(tool: string, outcome: string, seconds: number): void;
  /** One finished HTTP request, by route shape (see access-log.ts), method and status class. */
  observeRequest(route: string, method: string, status: number, seconds: number): void;
  /** Counts each mail the mailer sent, and each that failed. */
  countMail(mailer: Mailer): Mailer;
  /** Counts each catalogue import and the offers it inserted, updated and matched. */
  countImports(offers: OfferService): OfferService;
  /** Samples the age of the oldest doorbell still waiting (ms) at each scrape. */
  watchPendingAge(sample: () => Promise<number>): void;
  /** Samples the MCP requests served, waiting and refused at each scrape (admission.ts). */
  watchAdmission(admission: Admission): void;
  /** Adds another registry's metrics (the delivery engine's) to every scrape. */
  include(other: Registry): void;
  /** The text exposition of these metrics and of the included registries. */
  scrape(): Promise<{ contentType: string; body: string }>;
}

/** Distinct tool names and outcomes kept as labels; any more are counted as `other`. */
const MAX_LABEL_VALUES = 64;
const LABEL_SHAPE = /^[a-z][a-z0-9_.-]{0,63}$/;

/** Route shapes: a path made of fixed words and `:names` (access-log.ts makes them). */
const ROUTE_SHAPE = /^\/[A-Za-z0-9_.:/…-]{0,79}$/;

function boundedLabel(shape = LABEL_SHAPE): (value: string) => string {
  const seen = new Set<string>();
  return (value) => {
    if (!shape.test(value)) return "other";
    if (seen.has(value)) return value;
    if (seen.size >= MAX_LABEL_VALUES) return "other";
    seen.add(value);
    return value;
  };
}

const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

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
function processMemoryGauges(registers: Registry[]): void {
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

export function createHolderMetrics(): HolderMetrics {
  const registry = new Registry();
  const registers = [registry];
  const toolCalls = new Counter({
    name: "doorbell_mcp_tool_calls_total",
    help: "MCP tool calls by tool and outcome.",
    labelNames: ["tool", "outcome"],
    registers,
  });
  const toolSeconds = new Histogram({
    name: "doorbell_mcp_tool_call_seconds",
    help: "Time of one MCP tool call, by tool.",
    labelNames: ["tool"],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers,
  });
  const requests = new Counter({
    name: "doorbell_http_requests_total",
    help: "HTTP requests by route shape, method and status class.",
    labelNames: ["route", "method", "status"],
    registers,
  });
  const requestSeconds = new Histogram({
    name: "doorbell_http_request_seconds",
    help: "Time to answer one HTTP request, by route shape.",
    labelNames: ["route"],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers,
  });
  const mails = new Counter({
    name: "doorbell_mails_total",
    help: "Mails to people, by transport and result.",
    labelNames: ["transport", "result"],
    registers,
  });
  const imports = new Counter({
    name: "doorbell_catalogue_imports_total",
    help: "Catalogue imports, by result.",
    labelNames: ["result"],
    registers,
  });
  const importedOffers = new Counter({
    name: "doorbell_catalogue_offers_total",
    help: "Offers written by catalogue imports: inserted or updated.",
    labelNames: ["change"],
    registers,
  });
  const importMatches = new Counter({
    name: "doorbell_catalogue_import_matches_total",
    help: "New matches found by catalogue imports.",
    registers,
  });
  let pendingAge: (() => Promise<number>) | undefined;
  new Gauge({
    name: "doorbell_delivery_oldest_pending_age_seconds",
    help: "How long the oldest doorbell not yet delivered has waited since it was queued.",
    registers,
    async collect() {
      if (pendingAge !== undefined) this.set((await pendingAge()) / 1000);
    },
  });
  let admission: Admission | undefined;
  new Gauge({
    name: "doorbell_mcp_requests_active",
    help: "MCP requests this process is serving now.",
    registers,
    collect() {
      this.set(admission?.active ?? 0);
    },
  });
  new Gauge({
    name: "doorbell_mcp_requests_waiting",
    help: "MCP requests waiting for a turn in this process.",
    registers,
    collect() {
      this.set(admission?.queued ?? 0);
    },
  });
  let refusedSeen = 0;
  new Counter({
    name: "doorbell_mcp_requests_refused_total",
    help: "MCP requests answered 503 because this process's queue was full.",
    registers,
    collect() {
      const refused = admission?.refused ?? 0;
      this.inc(refused - refusedSeen);
      refusedSeen = refused;
    },
  });
  processMemoryGauges(registers);
  const tool = boundedLabel();
  const outcome = boundedLabel();
  const route = boundedLabel(ROUTE_SHAPE);
  const others: Registry[] = [];

  return {
    registry,
    observeToolCall(name, result, seconds) {
      const label = tool(name);
      toolCalls.inc({ tool: label, outcome: outcome(result) });
      if (Number.isFinite(seconds) && seconds >= 0) toolSeconds.observe({ tool: label }, seconds);
    },
    observeRequest(shape, method, status, seconds) {
      requests.inc({
        route: route(shape),
        method: METHODS.has(method) ? method : "other",
        status: status >= 100 && status < 600 ? `${Math.floor(status / 100)}xx` : "other",
      });
      if (Number.isFinite(seconds) && seconds >= 0) requestSeconds.observe({ route: route(shape) }, seconds);
    },
    countMail(mailer) {
      const transport = mailer.kind;
      // A wrapper with the mailer as prototype: whoever asks whether it is the local mailbox
      // (isLocalMailbox) still gets it, with its page's methods.
      return Object.create(mailer, {
        send: {
          value: async (message: Parameters<Mailer["send"]>[0]) => {
            try {
              await mailer.send(message);
            } catch (error) {
              mails.inc({ transport, result: "failed" });
              throw error;
            }
            mails.inc({ transport, result: "sent" });
          },
        },
      }) as Mailer;
    },
    countImports(offers) {
      return {
        ...offers,
        search: (statement, limit) => offers.search(statement, limit),
        submitReply: (offer) => offers.submitReply(offer),
        async importCatalogue(list) {
          let result: Awaited<ReturnType<OfferService["importCatalogue"]>>;
          try {
            result = await offers.importCatalogue(list);
          } catch (error) {
            imports.inc({ result: "failed" });
            throw error;
          }
          imports.inc({ result: "done" });
          importedOffers.inc({ change: "inserted" }, result.inserted);
          importedOffers.inc({ change: "updated" }, result.updated);
          importMatches.inc(result.matched);
          return result;
        },
      };
    },
    watchPendingAge(sample) {
      pendingAge = sample;
    },
    watchAdmission(watched) {
      admission = watched;
    },
    include(other) {
      others.push(other);
    },
    async scrape() {
      const merged = others.length === 0 ? registry : Registry.merge([registry, ...others]);
      return { contentType: merged.contentType, body: await merged.metrics() };
    },
  };
}
