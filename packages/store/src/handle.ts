// The handle's shape and the words around it, apart from the code that opens one, so migrations,
// schema helpers and other packages can name a handle without importing the engines.
import type { CompiledQuery, Kysely, Transaction } from "kysely";

/** The two engines Doorbell runs on. */
export type DialectName = "sqlite" | "postgres";

/**
 * The table map of a handle that has not been told about any table. Packages narrow it with
 * `handle.db.withTables<MyTables>()` or type their own handle as `Database<MyTables>`.
 */
export type NoTables = Record<never, never>;

export interface DatabaseConfig {
  /**
   * Where the data lives: `:memory:`, a SQLite file path (optionally prefixed `sqlite:`), or a
   * `postgres://` / `postgresql://` URL.
   */
  url: string;
  /** SQLite: how long a writer waits for another process's write lock, in ms (default 5000). */
  busyTimeoutMs?: number;
  /**
   * SQLite: `full` (default) makes every commit durable across power loss before it resolves;
   * `normal` is faster in WAL mode but may lose the last commits on power loss (never corrupts).
   * `full` is SQLite's `synchronous=NORMAL` plus an fsync of the WAL after every commit, done on
   * libuv's thread pool before anyone is answered (see `WalSync`): the same commits are durable as
   * with SQLite's own `FULL`, without blocking the event loop for each fsync.
   */
  synchronous?: "full" | "normal";
  /** PostgreSQL: pool size (default 10). */
  maxConnections?: number;
  /** PostgreSQL: how long to wait for a connection, in ms (default 10000). */
  connectTimeoutMs?: number;
  /**
   * PostgreSQL: prepare the statements run often, once per connection (see prepared.ts). Default:
   * on, unless the environment has DOORBELL_PG_PREPARED_STATEMENTS=off, for running behind a pooler
   * that cannot keep named statements (PgBouncer before 1.21 in transaction mode).
   */
  preparedStatements?: boolean;
  /**
   * PostgreSQL: called when an idle pooled connection fails (e.g. the server restarted). Without a
   * listener such an error would crash the process; by default it is dropped and the next query
   * reconnects.
   */
  onPoolError?: (error: Error) => void;
}

export interface Database<DB = NoTables> {
  readonly dialect: DialectName;
  /** The Kysely instance. Inside `transaction(fn)` use the `trx` it passes, never this. */
  readonly db: Kysely<DB>;
  /** Where the database is, for start-up summaries and logs; a PostgreSQL password is masked. */
  readonly description: string;
  /**
   * Runs `fn` in one transaction: commit when it resolves, roll back when it throws. SQLite takes the
   * write lock up front (`BEGIN IMMEDIATE`) so concurrent writers queue on `busy_timeout` instead of
   * failing half-way. A query on `db` (or a second `transaction`) inside `fn` throws
   * `ERR_STORE_NESTED_TRANSACTION` on both engines.
   */
  transaction<T>(fn: (trx: Transaction<DB>) => Promise<T>): Promise<T>;
  /**
   * Runs a compiled query that returns rows (a SELECT) and resolves with them. On SQLite the cached
   * statement runs at once, without Kysely's executor around it (a dozen promises, which on a hot
   * read path cost more than the query): on the connection when nobody holds it, else on a second,
   * read-only connection to the same file (never behind a writer's transaction). Either way it
   * reads committed data only, and answers once that data is durable. An in-memory database has
   * no second connection: there, and on PostgreSQL, it is `db.executeQuery` while a transaction
   * holds the connection.
   */
  read<R>(query: CompiledQuery<R>): Promise<R[]>;
  /**
   * `read`, with each row an array of its column values in the order the query selects them: for
   * reading many rows at once (a load at start), where building an object per row was a quarter
   * of the cost on SQLite. Integers as `read` gives them. PostgreSQL reads straight from the pool.
   */
  readArrays(query: CompiledQuery): Promise<unknown[][]>;
  /**
   * Calls `onNotify` whenever any process `notify`s on `channel` and commits. PostgreSQL: LISTEN on
   * one connection per handle for all its channels, which reconnects after errors. SQLite: the
   * notifications table, looked at every 25 ms (nothing when it was never migrated). Resolves with
   * a function that stops listening. `payload` is the notification's text; `undefined` means
   * notifications may have been missed (the connection was lost, and again once it listens anew):
   * reload what they would have said.
   */
  listen(channel: string, onNotify: (payload?: string) => void): Promise<() => Promise<void>>;
  /**
   * Tells every listener of `channel` in every process on this database, this one included, once
   * the transaction `db` belongs to commits (or at once, on the handle's `db`). PostgreSQL:
   * `pg_notify`. SQLite: a row of `store_notifications` (run `notificationMigrations`), which
   * listeners read within tens of milliseconds. `payload` is at most 7999 bytes.
   */
  notify(channel: string, payload: string, db?: Kysely<unknown>): Promise<void>;
  /**
   * PostgreSQL only: the pool's connections now, open, idle, and queries waiting for one. A request
   * slow for no slow statement may be waiting here. SQLite has one connection and no pool.
   */
  connections?(): PoolConnections;
  close(): Promise<void>;
}

export interface PoolConnections {
  open: number;
  idle: number;
  waiting: number;
}
