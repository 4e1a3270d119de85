/**
 * The refs a catalogue file's check has seen, each with its first line, to report a repeated ref
 * (memory bounded whatever the file's size). The first REFS_IN_MEMORY refs are
 * kept in a Map; past that they move to a temporary SQLite database (bounded page cache, no
 * journal). It has no name: SQLite keeps its pages in the system's temporary directory in a file
 * it deletes as it opens it (on Windows, one the system deletes when it is closed), so nothing is
 * left behind however the process ends, a signal or a kill included.
 */
import { createRequire } from "node:module";
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
  /** Whether the refs have moved to disk. */
  readonly onDisk: boolean;
  /** Closes the database on disk, if any. */
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
    get onDisk() {
      return disk !== undefined;
    },
    close() {
      memory = undefined;
      disk?.close();
      disk = undefined;
    },
  };
}

interface DiskRefs {
  firstLine(ref: string, line: number): number | undefined;
  close(): void;
}

function openDiskRefs(from: ReadonlyMap<string, number>): DiskRefs {
  // better-sqlite3 comes with @doorbell/store (as for the search thread).
  const Database = createRequire(import.meta.url)("better-sqlite3") as typeof BetterSqlite3;
  // An empty name is SQLite's temporary database: on disk past its page cache, in a file it
  // unlinks at once. temp_store FILE keeps it off the heap whatever the build's default.
  const db = new Database("");
  try {
    db.pragma("temp_store = FILE");
    db.pragma("journal_mode = OFF");
    db.pragma("synchronous = OFF");
    db.pragma(`cache_size = -${CACHE_KIB}`);
    db.exec("create table refs (ref text primary key, line integer not null) without rowid");
  } catch (error) {
    db.close();
    throw error;
  }
  const insert = db.prepare("insert into refs (ref, line) values (?, ?) on conflict (ref) do nothing");
  const select = db.prepare("select line from refs where ref = ?").pluck();
  // One transaction, never committed: the database is thrown away, and SQLite spills dirty pages
  // to its file once they outgrow the cache.
  db.exec("begin");
  for (const [ref, line] of from) insert.run(ref, line);
  return {
    firstLine(ref, line) {
      if (insert.run(ref, line).changes === 1) return undefined;
      return select.get(ref) as number;
    },
    close() {
      db.close();
    },
  };
}
