import fs from "node:fs";
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

/**
 * SQLite's WAL checkpoints, off the event loop. SQLite checkpoints by itself inside the COMMIT that
 * takes the WAL past 1,000 pages: it copies those pages into the database file and fsyncs both
 * files, stalling the one thread every request runs on for several milliseconds (6–9 ms for a
 * 4 MB WAL here). The write connection turns that off (`wal_autocheckpoint = 0`) and this runs
 * the same checkpoint on a connection of its own in a worker thread, while it holds the write
 * connection's gate: writes wait for it as they waited for the COMMIT before, but reads, timers
 * and requests go on. Holding the gate also lets the checkpoint finish before the next commit, so
 * SQLite restarts the WAL from its start at that commit, as before; a checkpoint racing the writer
 * would rarely catch up, and the WAL would grow without bound.
 *
 * The thread starts only once the WAL first reaches `WAL_START_BYTES`, so a database that is
 * written little (a CLI command, a test) never starts one and is checkpointed when it closes. If the
 * thread cannot start or fails, the write connection checkpoints by itself again.
 */
export class Checkpointer {
  readonly #file: string;
  readonly #gate: Gate;
  readonly #fallback: () => void;
  #worker: Worker | undefined;
  /** A checkpoint asked for and not yet answered, or a stat of the WAL running. */
  #pending = false;
  /** The gate is held for a checkpoint. */
  #holding = false;
  #failed = false;
  #closed = false;
  /** Commits since the last checkpoint was asked for, and how many to wait for before the next. */
  #commits = 0;
  #every = STAT_EVERY;

  /** `fallback` turns SQLite's own checkpoints back on for the write connection. */
  constructor(file: string, gate: Gate, fallback: () => void) {
    this.#file = file;
    this.#gate = gate;
    this.#fallback = fallback;
  }

  /** A transaction is committing on the write connection. */
  committed(): void {
    if (++this.#commits < this.#every || this.#pending || this.#failed || this.#closed) return;
    if (this.#worker) void this.#checkpoint();
    else this.#statWal();
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#release();
    const worker = this.#worker;
    this.#worker = undefined;
    if (worker) await worker.terminate();
  }

  /** Before the thread runs: whether the WAL has grown enough to start it. */
  #statWal(): void {
    this.#pending = true;
    this.#commits = 0;
    fs.stat(`${this.#file}-wal`, (error, stats) => {
      if (error || stats.size < WAL_START_BYTES || this.#closed) {
        this.#pending = false;
        return;
      }
      // Still pending: the first checkpoint is asked for once the thread has opened the file, so
      // writes never wait for the thread to start.
      this.#worker = this.#start();
      if (!this.#worker) this.#pending = false;
    });
  }

  #start(): Worker | undefined {
    try {
      const worker = new Worker(WORKER_SOURCE, {
        eval: true,
        workerData: { driver: requireHere.resolve("better-sqlite3"), file: this.#file },
      });
      // A checkpoint never keeps the process alive; whatever it had not copied, the next run will.
      worker.unref();
      worker.on("message", (answer: CheckpointAnswer) => this.#answered(answer));
      worker.on("error", () => this.#fail());
      worker.on("exit", () => {
        if (!this.#closed) this.#fail();
      });
      return worker;
    } catch {
      this.#fail();
      return undefined;
    }
  }

  async #checkpoint(): Promise<void> {
    this.#pending = true;
    const waiting = this.#gate.enter();
    if (waiting !== undefined) await waiting;
    this.#holding = true;
    if (this.#worker) this.#worker.postMessage("checkpoint");
    else this.#release();
  }

  #release(): void {
    if (!this.#holding) return;
    this.#holding = false;
    this.#gate.leave();
  }

  /**
   * Paces the next checkpoint by the WAL pages the commits since the last one wrote, so that one
   * runs about every `TARGET_PAGES` pages, as SQLite's own would.
   */
  #answered(answer: CheckpointAnswer): void {
    if ("ready" in answer) {
      void this.#checkpoint();
      return;
    }
    this.#pending = false;
    this.#release();
    if ("error" in answer) {
      this.#fail();
      return;
    }
    if ("busy" in answer) {
      // Another process was checkpointing the same file: try again after as many commits.
      this.#commits = 0;
      return;
    }
    const commits = Math.max(this.#commits, 1);
    const pagesPerCommit = Math.max(answer.walPages, 1) / commits;
    this.#every = Math.min(MAX_EVERY, Math.max(1, Math.round(TARGET_PAGES / pagesPerCommit)));
    this.#commits = 0;
  }

  #fail(): void {
    if (this.#failed || this.#closed) return;
    this.#failed = true;
    this.#release();
    const worker = this.#worker;
    this.#worker = undefined;
    void worker?.terminate();
    this.#fallback();
  }
}

/** The write connection's turn: taken by whoever runs a statement or a transaction on it. */
export interface Gate {
  enter(): Promise<void> | undefined;
  leave(): void;
}

type CheckpointAnswer = { ready: true } | { walPages: number } | { busy: true } | { error: string };

/** SQLite's default `wal_autocheckpoint`, in pages. */
export const TARGET_PAGES = 1000;
/** About `TARGET_PAGES` of 4 KiB: the WAL size at which SQLite itself would have checkpointed. */
const WAL_START_BYTES = 4 * 1024 * 1024;
/** Commits between looks at the WAL's size, before the thread has started. */
const STAT_EVERY = 16;
/** Commits between checkpoints, at most, however little each writes. */
const MAX_EVERY = 10_000;

const requireHere = createRequire(import.meta.url);

// CommonJS, evaluated in the worker: the driver is loaded by the path the main thread resolved.
// PASSIVE, as SQLite's own: it never waits on a lock (the gate already keeps this process's writes
// out). synchronous=NORMAL syncs the WAL before copying and the database file after, as the write
// connection's own checkpoints did.
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma("busy_timeout = 5000");
db.pragma("synchronous = NORMAL");
parentPort.postMessage({ ready: true });
parentPort.on("message", () => {
  try {
    const [result] = db.pragma("wal_checkpoint(PASSIVE)");
    parentPort.postMessage({ walPages: Number(result.log) });
  } catch (error) {
    if (error && error.code === "SQLITE_BUSY") parentPort.postMessage({ busy: true });
    else parentPort.postMessage({ error: String(error && error.message) });
  }
});
`;
