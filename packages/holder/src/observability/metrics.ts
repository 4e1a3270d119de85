/**
 * The holder's Prometheus metrics: MCP calls by tool, outcome and latency, mails sent,
 * catalogue imports, and HTTP requests by route shape — beside the delivery engine's own registry
 * (deliveries by outcome and category, queue depth, age of the oldest waiting doorbell).
 *
 * Numbers only. A label is one of a few fixed words, never a URL, path, host, secret, contact or
 * code: tool names and outcomes are checked against a small shape and a cap on distinct values,
 * so a caller cannot grow the label set without bound (metrics-labels.ts).
 *
 * Each group of metrics is made in its own module; the registry lists them in the order made.
 */
import type { Admission } from "@doorbell/mcp-endpoint";
import type { Database } from "@doorbell/store";
import { Registry } from "prom-client";
import type { Mailer } from "../mail/mailer.js";
import type { OfferService } from "../model/services.js";
import { callMetrics } from "./metrics-calls.js";
import { importMetrics, mailMetrics, watchedMetrics } from "./metrics-counted.js";
import { processRuntimeMetrics } from "./metrics-process.js";

export { watchRuntime } from "./metrics-process.js";

export interface HolderMetrics {
  readonly registry: Registry;
  /**
   * One MCP tool call: `tool` is the tool's name (`intent_publish`…), `outcome` one word
   * (`ok`, `tool_error`, `refused`, `failed`…), `seconds` how long the call took.
   */
  observeToolCall(tool: string, outcome: string, seconds: number): void;
  /** One finished HTTP request, by route shape (see access-log.ts), method and status class. */
  observeRequest(route: string, method: string, status: number, seconds: number): void;
  /** One tool call answered beside the SDK (the MCP endpoint's quick call). */
  countQuickCall(): void;
  /** Counts each mail the mailer sent, and each that failed. */
  countMail(mailer: Mailer): Mailer;
  /** Counts each catalogue import and the offers it inserted, updated and matched. */
  countImports(offers: OfferService): OfferService;
  /** Samples the age of the oldest doorbell still waiting (ms) at each scrape. */
  watchPendingAge(sample: () => Promise<number>): void;
  /** Samples the MCP requests served, waiting and refused at each scrape (admission.ts). */
  watchAdmission(admission: Admission): void;
  /** Follows the store's PostgreSQL pool at each scrape (a SQLite store has none). */
  watchConnections(store: Pick<Database, "connections">): void;
  /** Adds another registry's metrics (the delivery engine's) to every scrape. */
  include(other: Registry): void;
  /** The text exposition of these metrics and of the included registries. */
  scrape(): Promise<{ contentType: string; body: string }>;
}

export function createHolderMetrics(): HolderMetrics {
  const registry = new Registry();
  const registers = [registry];
  const calls = callMetrics(registers);
  const mails = mailMetrics(registers);
  const imports = importMetrics(registers);
  const watched = watchedMetrics(registers);
  processRuntimeMetrics(registers);
  const others: Registry[] = [];

  return {
    registry,
    observeToolCall: calls.observeToolCall,
    observeRequest: calls.observeRequest,
    countQuickCall: calls.countQuickCall,
    countMail: mails.count,
    countImports: imports.count,
    watchPendingAge: watched.watchPendingAge,
    watchAdmission: watched.watchAdmission,
    watchConnections: watched.watchConnections,
    include(other) {
      others.push(other);
    },
    async scrape() {
      const merged = others.length === 0 ? registry : Registry.merge([registry, ...others]);
      return { contentType: merged.contentType, body: await merged.metrics() };
    },
  };
}
