import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { type Database, type Kysely, openDatabase } from "@doorbell/store";
import BetterSqlite3 from "better-sqlite3";
import { printComparison } from "./harness.js";

// Small SQLite transactions back to back, as the delivery engine and the holder commit them: how
// long the event loop stalls and how many commits a second go through. Ours is the store (WAL,
// checkpoints on a thread of their own, packages/store/src/checkpointer.ts); the baseline is bare
// better-sqlite3 on the same workload, where SQLite checkpoints inside the COMMIT that takes the
// WAL past 1,000 pages. Both with synchronous=NORMAL, so the checkpoint is the only difference in
// what a commit does; ours with the store's default (FULL, its fsync on the thread pool) is shown
// beside. In-process.

const COMMITS = 5_000;
const ROWS = 20;
const BODY = "x".repeat(300);

interface Tables {
  entry: { id: number; s: string; q: number; body: string };
}

interface Run {
  name: string;
  rate: number;
  /** Per transaction, ms. */
  latencies: number[];
  /** The event loop's delay while it ran, ms. */
  loopP99: number;
  loopMax: number;
}

export async function benchSqliteCommits(): Promise<void> {
  console.log(
    `Node ${process.version}; ${COMMITS.toLocaleString("en-US")} transactions of ${ROWS} rows of ` +
      `${BODY.length} bytes into a table with a unique index, one after another, in ${os.tmpdir()}.`,
  );
  const runs = [await rawRun(), await storeRun("normal"), await storeRun("full")];
  const [raw, ours, oursFull] = runs as [Run, Run, Run];
  printComparison("commits/s, synchronous=NORMAL:", [
    { name: "doorbell store (checkpoint thread)", opsPerSecond: ours.rate },
    { name: "bare better-sqlite3 (checkpoints in COMMIT)", opsPerSecond: raw.rate },
  ]);
  console.log(
    `  doorbell store with its default synchronous=full: ${Math.round(oursFull.rate).toLocaleString("en-US")} commits/s`,
  );
  console.log("\nper transaction and event-loop delay (ms):");
  for (const run of [ours, raw, oursFull]) {
    const sorted = [...run.latencies].sort((a, b) => a - b);
    const at = (q: number) =>
      (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number).toFixed(2);
    console.log(
      `  ${run.name.padEnd(44)} transaction p50 ${at(0.5)}, p99 ${at(0.99)}, max ${at(1)}; ` +
        `event loop p99 ${run.loopP99.toFixed(2)}, max ${run.loopMax.toFixed(2)}`,
    );
  }
}

function freshFile(): { file: string; remove(): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-bench-commits-"));
  return {
    file: path.join(dir, "db.sqlite"),
    remove: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

const CREATE =
  "create table entry (id integer primary key, s text not null, q integer not null, body text not null, constraint entry_order unique (s, q))";

/** The baseline: the same transactions through a prepared insert, SQLite checkpointing by itself. */
async function rawRun(): Promise<Run> {
  const { file, remove } = freshFile();
  const db = new BetterSqlite3(file);
  try {
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.exec(CREATE);
    const insert = db.prepare("insert into entry (s, q, body) values (?, ?, ?)");
    const transaction = db.transaction((first: number) => {
      for (let i = first; i < first + ROWS; i++) insert.run(`sub${i % 64}`, i, BODY);
    });
    return await timed("bare better-sqlite3 (checkpoints in COMMIT)", async (commit) => {
      transaction(commit * ROWS);
    });
  } finally {
    db.close();
    remove();
  }
}

async function storeRun(synchronous: "normal" | "full"): Promise<Run> {
  const { file, remove } = freshFile();
  const store: Database = await openDatabase({ url: file, synchronous });
  try {
    await (store.db as unknown as Kysely<Tables>).schema
      .createTable("entry")
      .addColumn("id", "integer", (c) => c.primaryKey())
      .addColumn("s", "text", (c) => c.notNull())
      .addColumn("q", "integer", (c) => c.notNull())
      .addColumn("body", "text", (c) => c.notNull())
      .addUniqueConstraint("entry_order", ["s", "q"])
      .execute();
    const name =
      synchronous === "normal" ? "doorbell store (checkpoint thread)" : "doorbell store, synchronous=full";
    // Compiled once and run with each row's values, as the baseline's prepared statement is (and
    // as the delivery engine runs its hot statements): the store's cost, not the query builder's.
    const insert = (store.db as unknown as Kysely<Tables>)
      .insertInto("entry")
      .values({ s: "", q: 0, body: "" } as never)
      .compile();
    return await timed(name, (commit) =>
      store.transaction(async (trx) => {
        for (let i = commit * ROWS; i < (commit + 1) * ROWS; i++) {
          await trx.executeQuery({ ...insert, parameters: [`sub${i % 64}`, i, BODY] });
        }
      }),
    );
  } finally {
    await store.close();
    remove();
  }
}

async function timed(name: string, commit: (n: number) => Promise<unknown>): Promise<Run> {
  const latencies: number[] = [];
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const start = performance.now();
  for (let n = 0; n < COMMITS; n++) {
    // One transaction per turn of the event loop, as requests bring them: a stall shows as the
    // loop's delay (a loop of transactions that settle in microtasks alone would never let it turn).
    await new Promise((resolve) => setImmediate(resolve));
    const began = performance.now();
    await commit(n);
    latencies.push(performance.now() - began);
  }
  const rate = COMMITS / ((performance.now() - start) / 1000);
  loop.disable();
  return { name, rate, latencies, loopP99: loop.percentile(99) / 1e6, loopMax: loop.max / 1e6 };
}
