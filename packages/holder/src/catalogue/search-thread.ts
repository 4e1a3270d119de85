/**
 * Full-text search on SQLite off the event loop. better-sqlite3 runs a query
 * synchronously, so a search that ranks a large part of the catalogue would hold every other
 * request for as long as it takes. Here searches run on a worker thread with its own read-only
 * connection to the same file (WAL: it sees every committed offer), one at a time, and the event
 * loop only waits for the answer. A bounded queue refuses a flood instead of growing without end.
 */
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type { Database } from "@doorbell/store";
import type { HolderTables, OfferRow } from "../model/tables.js";
import { HolderError } from "../model/types.js";

/** Searches waiting for the thread beyond this are refused ("busy, try again"), not queued. */
export const SEARCH_QUEUE_MAX = 32;
/** An answer later than this is given up (the thread finishes the query and drops the rows). */
export const SEARCH_TIME_BUDGET_MS = 5_000;

export interface SearchRequest {
  terms: string[];
  limit: number;
  prefixWords: number;
  candidates: number;
}

// The thread's code: plain JavaScript (no loader needed under tsx, vitest or the built package).
// It expands each word's prefix through the FTS5 vocabulary (bounded), then looks for offers with
// every word, else with any of them ranked by bm25, newest candidates first.
const THREAD = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.filename, { readonly: true, fileMustExist: true });
db.exec("create virtual table if not exists temp.holder_offer_search_vocab using fts5vocab(main, holder_offer_search, row)");
const vocab = db.prepare("select term from temp.holder_offer_search_vocab where term >= ? and term < ? limit ?");
const select = (rank, candidates) => db.prepare(
  "with c as materialized (select rowid as search_id" + (rank ? ", bm25(holder_offer_search, 2.0, 1.0) as score" : "") +
  " from holder_offer_search where holder_offer_search match ? order by rowid desc limit " + candidates + ")" +
  " select o.* from c cross join holder_offer_search_keys k cross join holder_offers o" +
  " where k.search_id = c.search_id and o.id = k.offer_id and o.source_kind = 'catalogue' and o.withdrawn_at is null" +
  " order by " + (rank ? "c.score, " : "") + "o.published_at desc, o.id limit ?");
function search({ terms, limit, prefixWords, candidates }) {
  const groups = [];
  let missing = false;
  for (const term of terms) {
    const words = vocab.all(term, term + "\\uffff", prefixWords).map((row) => row.term);
    if (words.length === 0) { missing = true; continue; }
    groups.push("(" + words.map((word) => '"' + word + '"').join(" OR ") + ")");
  }
  if (groups.length === 0) return [];
  let rows = missing ? [] : select(false, candidates).all(groups.join(" AND "), limit);
  if (rows.length === 0 && terms.length > 1) rows = select(true, candidates).all(groups.join(" OR "), limit);
  return rows;
}
parentPort.on("message", ({ id, request }) => {
  try { parentPort.postMessage({ id, rows: search(request) }); }
  catch (error) { parentPort.postMessage({ id, error: String(error && error.message) }); }
});
`;

export interface SearchThread {
  search(request: SearchRequest): Promise<OfferRow[]>;
  close(): Promise<void>;
}

/** A search thread for a SQLite file, or undefined for an in-memory database (searched in place). */
export function searchThreadFor(store: Database<HolderTables>): SearchThread | undefined {
  if (store.dialect !== "sqlite" || !store.description.startsWith("sqlite:")) return undefined;
  const filename = store.description.slice("sqlite:".length);
  if (filename === ":memory:" || filename === "") return undefined;
  const driver = createRequire(import.meta.url).resolve("better-sqlite3");
  let worker: Worker | undefined;
  let next = 0;
  const waiting = new Map<
    number,
    { resolve(rows: OfferRow[]): void; reject(error: Error): void; timer: NodeJS.Timeout }
  >();

  const failAll = (error: Error) => {
    for (const [id, call] of waiting) {
      clearTimeout(call.timer);
      call.reject(error);
      waiting.delete(id);
    }
    worker = undefined;
  };
  const start = (): Worker => {
    const thread = new Worker(THREAD, { eval: true, workerData: { driver, filename } });
    thread.unref();
    thread.on("message", (message: { id: number; rows?: OfferRow[]; error?: string }) => {
      const call = waiting.get(message.id);
      if (call === undefined) return;
      waiting.delete(message.id);
      clearTimeout(call.timer);
      if (message.error !== undefined) call.reject(new Error(message.error));
      else call.resolve(message.rows ?? []);
    });
    thread.on("error", (error) => failAll(error));
    thread.on("exit", () =>
      failAll(new HolderError("ERR_HOLDER_UNAVAILABLE", "search is restarting; try again")),
    );
    return thread;
  };

  return {
    search(request) {
      if (waiting.size >= SEARCH_QUEUE_MAX) {
        return Promise.reject(
          new HolderError(
            "ERR_HOLDER_UNAVAILABLE",
            "the catalogue search is busy; try again in a few seconds",
          ),
        );
      }
      worker ??= start();
      const id = next++;
      return new Promise<OfferRow[]>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.delete(id);
          reject(
            new HolderError(
              "ERR_HOLDER_UNAVAILABLE",
              "the catalogue search took too long; try fewer or longer words",
            ),
          );
        }, SEARCH_TIME_BUDGET_MS);
        timer.unref();
        waiting.set(id, { resolve, reject, timer });
        worker?.postMessage({ id, request });
      });
    },
    async close() {
      const thread = worker;
      worker = undefined;
      await thread?.terminate();
    },
  };
}
