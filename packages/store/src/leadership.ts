import { randomBytes } from "node:crypto";
import { sql } from "kysely";
import { StoreError } from "./errors.js";
import type { Database } from "./handle.js";
import { defineMigrations } from "./migrations.js";

/**
 * Leadership over a named piece of background work, shared by every process on one database:
 * expiry, sweeps, purges and digests run in one process at a time.
 *
 * A lease row per name, not a PostgreSQL advisory lock: it works the same on both engines, and
 * the leader need not keep a connection of its own. The leader renews the row while it runs; a
 * leader that dies stops renewing, and once its lease has expired the next process to ask takes
 * over. Ask every `ttlMs / 2` and a dead leader's work resumes within `1.5 × ttlMs`.
 */
export const leadershipMigrations = defineMigrations("store-leadership", [
  {
    version: 1,
    name: "leases",
    async up(db, { types }) {
      await db.schema
        .createTable("store_leadership")
        .addColumn("name", "text", (c) => c.primaryKey())
        .addColumn("owner", "text", (c) => c.notNull())
        .addColumn("expires_at", types.timestamp, (c) => c.notNull())
        .execute();
    },
  },
]);

export interface LeadershipOptions {
  /** What is led, e.g. "holder.background". */
  name: string;
  /** How long a lease lasts without renewal (default 30 s). */
  ttlMs?: number;
  /** Names this process (default random). */
  owner?: string;
  clock?: () => number;
}

export interface Leadership {
  readonly owner: string;
  readonly ttlMs: number;
  /** Takes or renews the lease; true while this process leads. */
  hold(): Promise<boolean>;
  /** Gives the lease up at once (graceful shutdown), so another process need not wait for it to expire. */
  release(): Promise<void>;
}

export function createLeadership(store: Database, options: LeadershipOptions): Leadership {
  const ttlMs = options.ttlMs ?? 30_000;
  if (!(Number.isSafeInteger(ttlMs) && ttlMs >= 1_000)) {
    throw new StoreError("ERR_STORE_CONFIG", "a leadership lease lasts at least 1000 ms");
  }
  const owner = options.owner ?? `ldr_${randomBytes(9).toString("base64url")}`;
  const clock = options.clock ?? Date.now;
  const { name } = options;
  return {
    owner,
    ttlMs,
    async hold() {
      const now = clock();
      // One statement on both engines: it inserts the row, renews our own lease, or takes an
      // expired one. Concurrent callers serialise on the row: only one of them gets it back.
      const { rows } = await sql<{ owner: string }>`
        insert into store_leadership (name, owner, expires_at) values (${name}, ${owner}, ${now + ttlMs})
        on conflict (name) do update set owner = excluded.owner, expires_at = excluded.expires_at
        where store_leadership.owner = excluded.owner or store_leadership.expires_at <= ${now}
        returning owner`.execute(store.db);
      return rows[0]?.owner === owner;
    },
    async release() {
      await sql`delete from store_leadership where name = ${name} and owner = ${owner}`.execute(store.db);
    },
  };
}
