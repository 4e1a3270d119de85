/**
 * The refs a catalogue file's check has seen, each with its first line, to report a repeated ref
 * (issue 16 item 6: memory bounded whatever the file's size). The first REFS_IN_MEMORY refs are
 * kept in a Map; past that they move to a SQLite file of their own in the system's temporary
 * directory (bounded page cache, no journal), deleted when the check ends.
 */
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import type BetterSqlite3 from "better-sqlite3";

/** Refs kept in memory before they move to disk (a few MB). */
export const REFS_IN_MEMORY = 50_000;
/** The spill file's page cache, in KiB. */
const CACHE_KIB = 4096;

export interface SeenRefs {
  /** The line `ref` was first seen on, or undefined after recording it at `line`. */
  firstLine(ref: string, line: number): number | undefined;
  /** How many refs are held in memory now (for tests: never more than REFS_IN_MEMORY). */
  readonly inMemory: number;
  /** The spill file while there is one. */
  readonly spillFile: string | undefined;
  /** Deletes the spill file, if any. */
  close(): void;
}

export function seenRefs(inMemoryMax = REFS_IN_MEMORY): SeenRefs {
  let memory: Map<string, number> | undefined = new Map();
  let disk: DiskRefs | undefined;
  return {
    firstLine(ref, line) {
      if (memory !== undefined) {
        const first = memory.get(ref);
        if (first !== undefined) return first;
        if (memory.size < inMemoryMax) {
          memory.set(ref, line);
          return undefined;
        }
        disk = openDiskRefs(memory);
        memory = undefined;
      }
      return (disk as DiskRefs).firstLine(ref, line);
    },
    get inMemory() {
      return memory?.size ?? 0;
    },
    get spillFile() {
      return disk?.file;
    },
    close() {
      memory = undefined;
      disk?.close();
      disk = undefined;
    },
  };
}

interface DiskRefs {
  readonly file: string;
  firstLine(ref: string, line: number): number | undefined;
  close(): void;
}

function openDiskRefs(from: ReadonlyMap<string, number>): DiskRefs {
  // better-sqlite3 comes with @doorbell/store (as for the search thread).
  const Database = createRequire(import.meta.url)("better-sqlite3") as typeof BetterSqlite3;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-refs-"));
  const file = path.join(dir, "refs.sqlite");
  let db: BetterSqlite3.Database;
  try {
    db = new Database(file);
    db.pragma("journal_mode = OFF");
    db.pragma("synchronous = OFF");
    db.pragma(`cache_size = -${CACHE_KIB}`);
    db.exec("create table refs (ref text primary key, line integer not null) without rowid");
  } catch (error) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const insert = db.prepare("insert into refs (ref, line) values (?, ?) on conflict (ref) do nothing");
  const select = db.prepare("select line from refs where ref = ?").pluck();
  // One transaction, never committed: the file is thrown away, and SQLite spills dirty pages to it
  // once they outgrow the cache.
  db.exec("begin");
  for (const [ref, line] of from) insert.run(ref, line);
  return {
    file,
    firstLine(ref, line) {
      if (insert.run(ref, line).changes === 1) return undefined;
      return select.get(ref) as number;
    },
    close() {
      db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
