// SQLite's WAL checkpoints run on a thread of their own (checkpointer.ts), not inside a COMMIT on
// the event loop: the WAL still stays bounded under sustained writes, nothing written is lost, and
// when the thread cannot run, the write connection checkpoints by itself again.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { type Database, type Kysely, openDatabase } from "@doorbell/store";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Checkpointer, type Gate } from "../src/checkpointer.js";

interface Tables {
  entry: { id: number; body: string };
}

const MB = 1024 * 1024;
const ROW = "x".repeat(4000);

describe("SQLite checkpoints on their own thread", () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-checkpoint-"));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("keeps the WAL bounded while 40 MB are committed, and loses no row", async () => {
    const file = path.join(dir, "db.sqlite");
    const store = await openDatabase(file);
    let largestWal = 0;
    try {
      await createEntries(store);
      for (let commit = 0; commit < 100; commit++) {
        await store.transaction(async (trx) => {
          const rows = Array.from({ length: 100 }, (_, i) => ({ id: commit * 100 + i + 1, body: ROW }));
          await (trx as unknown as Kysely<Tables>).insertInto("entry").values(rows).execute();
        });
        largestWal = Math.max(largestWal, fs.statSync(`${file}-wal`).size);
      }
      expect(await countEntries(store)).toBe(10_000);
    } finally {
      await store.close();
    }
    // Without any checkpoint the WAL would hold all 40 MB; SQLite restarts it after each complete
    // one, so it never grows far past the 4 MB at which one is asked for.
    expect(largestWal).toBeGreaterThan(4 * MB);
    expect(largestWal).toBeLessThan(16 * MB);

    const reopened = await openDatabase(file);
    try {
      expect(await countEntries(reopened)).toBe(10_000);
    } finally {
      await reopened.close();
    }
  });

  it("turns SQLite's own checkpoints back on when the thread cannot open the database", async () => {
    // A WAL past the size that starts the thread, beside no database file: the thread fails to open it.
    const file = path.join(dir, "missing.sqlite");
    fs.writeFileSync(`${file}-wal`, Buffer.alloc(5 * MB));
    const gate = countingGate();
    let fellBack!: () => void;
    const fallback = new Promise<void>((resolve) => {
      fellBack = resolve;
    });
    const checkpointer = new Checkpointer(file, gate, fellBack);
    try {
      for (let i = 0; i < 16; i++) checkpointer.committed();
      await fallback;
      // Whatever the failed checkpoint held is given back.
      expect(gate.held).toBe(0);
    } finally {
      await checkpointer.close();
    }
  });

  it("closes while a checkpoint waits for the write connection, and gives the gate back", async () => {
    const file = path.join(dir, "db.sqlite");
    const store = await openDatabase(file);
    await createEntries(store);
    await store.close();
    fs.appendFileSync(`${file}-wal`, Buffer.alloc(0));
    fs.truncateSync(`${file}-wal`, 5 * MB);
    const gate = countingGate();
    gate.enter();
    const checkpointer = new Checkpointer(file, gate, () => {
      throw new Error("no fallback expected");
    });
    for (let i = 0; i < 16; i++) checkpointer.committed();
    await new Promise((resolve) => setTimeout(resolve, 50));
    await checkpointer.close();
    // The waiting checkpoint gets the gate now, finds the checkpointer closed and gives it back.
    gate.leave();
    await new Promise((resolve) => setImmediate(resolve));
    expect(gate.held).toBe(0);
  });
});

async function createEntries(store: Database): Promise<void> {
  await (store.db as unknown as Kysely<Tables>).schema
    .createTable("entry")
    .addColumn("id", "integer", (c) => c.primaryKey())
    .addColumn("body", "text", (c) => c.notNull())
    .execute();
}

async function countEntries(store: Database): Promise<number> {
  const row = await (store.db as unknown as Kysely<Tables>)
    .selectFrom("entry")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** A gate like the write connection's, counting who holds it. */
function countingGate(): Gate & { readonly held: number } {
  let held = 0;
  const waiting: (() => void)[] = [];
  return {
    get held() {
      return held;
    },
    enter() {
      if (held === 0) {
        held = 1;
        return undefined;
      }
      return new Promise<void>((resolve) => waiting.push(resolve));
    },
    leave() {
      const next = waiting.shift();
      if (next) next();
      else held = 0;
    },
  };
}
