import type { Admission } from "@doorbell/mcp-endpoint";
import type { Database } from "@doorbell/store";
import { Counter, Gauge, type Registry } from "prom-client";
import type { Mailer } from "../mail/mailer.js";
import type { OfferService } from "../model/services.js";

/** Mails sent and failed, by transport: `count` wraps a mailer so that each send is counted. */
export function mailMetrics(registers: Registry[]): { count(mailer: Mailer): Mailer } {
  const mails = new Counter({
    name: "doorbell_mails_total",
    help: "Mails to people, by transport and result.",
    labelNames: ["transport", "result"],
    registers,
  });
  return {
    count(mailer) {
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
  };
}

/** Catalogue imports and the offers they wrote and matched: `count` wraps an offer service. */
export function importMetrics(registers: Registry[]): { count(offers: OfferService): OfferService } {
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
  return {
    count(offers) {
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
  };
}

/**
 * Sampled at each scrape from what is watched: the age of the oldest doorbell still waiting, and
 * the MCP requests served, waiting and refused (admission.ts). Zero, or nothing, until watched.
 */
export function watchedMetrics(registers: Registry[]): {
  watchPendingAge(sample: () => Promise<number>): void;
  watchAdmission(admission: Admission): void;
  watchConnections(store: Pick<Database, "connections">): void;
} {
  let pendingAge: (() => Promise<number>) | undefined;
  new Gauge({
    name: "doorbell_delivery_oldest_pending_age_seconds",
    help: "How long the oldest doorbell not yet delivered has waited since it was queued.",
    registers,
    async collect() {
      if (pendingAge !== undefined) this.set((await pendingAge()) / 1000);
    },
  });
  let pooled: Pick<Database, "connections"> | undefined;
  new Gauge({
    name: "doorbell_store_connections",
    help: "PostgreSQL pool connections of this process now: open, idle, and queries waiting for one.",
    labelNames: ["state"],
    registers,
    collect() {
      const now = pooled?.connections?.();
      if (now === undefined) return;
      this.set({ state: "open" }, now.open);
      this.set({ state: "idle" }, now.idle);
      this.set({ state: "waiting" }, now.waiting);
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
  followingCounter(
    registers,
    "doorbell_mcp_requests_refused_total",
    "MCP requests answered 503 because this process's queue was full or its heap over its bound.",
    () => admission?.refused ?? 0,
  );
  followingCounter(
    registers,
    "doorbell_mcp_requests_refused_heap_total",
    "Of the MCP requests answered 503, those refused because this process's JavaScript heap was over its bound.",
    () => admission?.refusedForHeap ?? 0,
  );
  new Gauge({
    name: "doorbell_mcp_heap_bound_bytes",
    help: "The JavaScript heap size past which this process admits no new MCP request (0: no bound).",
    registers,
    collect() {
      const bound = admission?.limits.heapBound ?? 0;
      this.set(Number.isFinite(bound) ? bound : 0);
    },
  });
  return {
    watchPendingAge(sample) {
      pendingAge = sample;
    },
    watchAdmission(watched) {
      admission = watched;
    },
    watchConnections(store) {
      pooled = store;
    },
  };
}

/** A counter that follows a running total kept elsewhere, read at each scrape. */
function followingCounter(registers: Registry[], name: string, help: string, total: () => number): void {
  let seen = 0;
  new Counter({
    name,
    help,
    registers,
    collect() {
      const now = total();
      this.inc(now - seen);
      seen = now;
    },
  });
}
