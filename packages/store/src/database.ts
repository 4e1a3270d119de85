import { AsyncLocalStorage } from "node:async_hooks";
import fs from "node:fs";
import path from "node:path";
import BetterSqlite3 from "better-sqlite3";
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  type Dialect as KyselyDialect,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  PostgresDialect,
  type QueryResult,
  type RootOperationNode,
  SqliteDialect,
  type Transaction,
  type TransactionSettings,
  type UnknownRow,
} from "kysely";
import pg from "pg";
import { StoreError } from "./errors.js";

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
   * SQLite: `full` (default) makes every commit durable across power loss; `normal` is faster in WAL
   * mode but may lose the last commits on power loss (never corrupts).
   */
  synchronous?: "full" | "normal";
  /** PostgreSQL: pool size (default 10). */
  maxConnections?: number;
  /** PostgreSQL: how long to wait for a connection, in ms (default 10000). */
  connectTimeoutMs?: number;
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
   * Runs a compiled query that returns rows (a SELECT) and resolves with them. On SQLite, when no
   * transaction holds the connection, the cached statement runs at once: it reads committed data,
   * as any query on `db` would, without Kysely's executor around it (a dozen promises, which on a
   * hot read path cost more than the query). Otherwise, and on PostgreSQL, it is `db.executeQuery`.
   */
  read<R>(query: CompiledQuery<R>): Promise<R[]>;
  /**
   * Calls `onNotify` whenever any process runs `pg_notify(channel, …)` and commits (PostgreSQL, on a
   * dedicated connection that reconnects after errors). On SQLite it does nothing: one process
   * owns the file, and it wakes its own workers. Resolves with a function that stops listening.
   */
  listen(channel: string, onNotify: () => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

const DEFAULT_BUSY_TIMEOUT_MS = 5000;

interface ParsedTarget {
  dialect: DialectName;
  /** SQLite: a file path or `:memory:`; PostgreSQL: the connection string. */
  location: string;
  description: string;
}

/** Decides the engine from the URL without ever echoing a PostgreSQL URL (it may carry a password). */
export function describeDatabaseUrl(url: string): ParsedTarget {
  if (typeof url !== "string" || url.trim() === "") {
    throw new StoreError("ERR_STORE_CONFIG", "the database URL is empty");
  }
  if (/^postgres(ql)?:\/\//i.test(url)) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new StoreError("ERR_STORE_CONFIG", "the PostgreSQL URL cannot be parsed");
    }
    const user = parsed.username
      ? `${decodeURIComponent(parsed.username)}${parsed.password ? ":***" : ""}@`
      : "";
    const description = `postgres://${user}${parsed.host}${parsed.pathname}`;
    return { dialect: "postgres", location: url, description };
  }
  if (url === ":memory:" || url === "sqlite::memory:") {
    return { dialect: "sqlite", location: ":memory:", description: "sqlite::memory:" };
  }
  let file = url;
  if (/^sqlite:/i.test(file)) {
    file = file.slice("sqlite:".length);
    if (file.startsWith("//")) file = file.slice(2);
  } else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(file)) {
    throw new StoreError(
      "ERR_STORE_CONFIG",
      "unsupported database URL scheme: use a SQLite file path, :memory: or postgres://",
    );
  }
  if (file === "") throw new StoreError("ERR_STORE_CONFIG", "the SQLite path is empty");
  const absolute = path.resolve(file);
  return { dialect: "sqlite", location: absolute, description: `sqlite:${absolute}` };
}

/** Opens SQLite or PostgreSQL behind one Kysely instance; the same queries run on both. */
export async function openDatabase<DB = NoTables>(config: string | DatabaseConfig): Promise<Database<DB>> {
  const options: DatabaseConfig = typeof config === "string" ? { url: config } : config;
  const target = describeDatabaseUrl(options.url);
  return target.dialect === "sqlite" ? openSqlite<DB>(target, options) : openPostgres<DB>(target, options);
}

function integerOption(value: number | undefined, fallback: number, name: string, min: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < min) {
    throw new StoreError("ERR_STORE_CONFIG", `${name} must be an integer of at least ${min}`);
  }
  return value;
}

function openSqlite<DB>(target: ParsedTarget, options: DatabaseConfig): Database<DB> {
  const busyTimeoutMs = integerOption(options.busyTimeoutMs, DEFAULT_BUSY_TIMEOUT_MS, "busyTimeoutMs", 0);
  const synchronous = options.synchronous ?? "full";
  if (synchronous !== "full" && synchronous !== "normal") {
    throw new StoreError("ERR_STORE_CONFIG", "synchronous must be 'full' or 'normal'");
  }
  const inMemory = target.location === ":memory:";
  const existed = !inMemory && fs.existsSync(target.location);
  let native: BetterSqlite3.Database;
  try {
    if (!inMemory && !existed) fs.mkdirSync(path.dirname(target.location), { recursive: true, mode: 0o700 });
    native = new BetterSqlite3(target.location);
  } catch (error) {
    throw new StoreError("ERR_STORE_CONNECT", `could not open the SQLite database at ${target.description}`, {
      cause: error,
    });
  }
  try {
    native.pragma(`busy_timeout = ${busyTimeoutMs}`);
    if (!inMemory) native.pragma("journal_mode = WAL");
    native.pragma(`synchronous = ${synchronous.toUpperCase()}`);
    native.pragma("foreign_keys = ON");
    // Integers come back as bigint and are narrowed by SafeIntegerPlugin: a value that does not fit a
    // JavaScript number fails loudly (as on PostgreSQL) instead of silently losing precision.
    native.defaultSafeIntegers(true);
    // The database holds hashes and sealed values: owner-only, like the key file. SQLite gives the
    // -wal and -shm files the same mode as the database file.
    if (!inMemory && !existed && process.platform !== "win32") fs.chmodSync(target.location, 0o600);
  } catch (error) {
    native.close();
    throw new StoreError(
      "ERR_STORE_CONNECT",
      `could not set up the SQLite database at ${target.description}`,
      {
        cause: error,
      },
    );
  }
  const guard = new TransactionGuard();
  const statements = withStatementCache(native);
  const dialect = new GuardedDialect(
    new SqliteDialect({ database: statements }),
    guard,
    "begin immediate",
    new FifoGate(),
  );
  const db = new Kysely<DB>({ dialect, plugins: [new SafeIntegerPlugin()] });
  // better-sqlite3 runs a statement to completion synchronously, so when the connection is not in a
  // transaction nothing else is using it and this read sees committed data only.
  const readNow = (query: CompiledQuery): UnknownRow[] | undefined => {
    if (native.inTransaction) return undefined;
    const statement = statements.prepare(query.sql);
    if (!statement.reader) throw new StoreError("ERR_STORE_CONFIG", "read() takes a query that returns rows");
    const rows = statement.all(...(query.parameters as unknown[])) as UnknownRow[];
    narrowRows(rows);
    return rows;
  };
  return createHandle("sqlite", db, guard, target.description, undefined, readNow);
}

/** Prepared statements kept per SQL text; preparing costs about 10 µs, more than many queries. */
const STATEMENT_CACHE_SIZE = 256;

/**
 * Kysely prepares every query afresh. better-sqlite3 statements are reusable (every call binds its
 * own parameters and runs to completion synchronously), so the same SQL text reuses one statement;
 * the least recently used is dropped past the bound. SQLite re-prepares a statement by itself
 * after a schema change.
 */
function withStatementCache(native: BetterSqlite3.Database) {
  const cache = new Map<string, BetterSqlite3.Statement>();
  return {
    close: () => native.close(),
    prepare(source: string): BetterSqlite3.Statement {
      let statement = cache.get(source);
      if (statement) {
        cache.delete(source);
      } else {
        statement = native.prepare(source);
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
      }
      cache.set(source, statement);
      return statement;
    },
  };
}

/** int8 (e.g. bigint columns, count(*)) as a JavaScript number, refusing values it cannot hold exactly. */
function parseInt8(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n)) {
    throw new StoreError(
      "ERR_STORE_INTEGER_OVERFLOW",
      "an integer from the database does not fit a JavaScript number",
    );
  }
  return n;
}

const INT8_OID = 20;

async function openPostgres<DB>(target: ParsedTarget, options: DatabaseConfig): Promise<Database<DB>> {
  const max = integerOption(options.maxConnections, 10, "maxConnections", 1);
  const connectTimeoutMs = integerOption(options.connectTimeoutMs, 10_000, "connectTimeoutMs", 0);
  const pool = new pg.Pool({
    connectionString: target.location,
    max,
    connectionTimeoutMillis: connectTimeoutMs,
    types: {
      getTypeParser: ((oid: number, format?: "text" | "binary") => {
        if (oid === INT8_OID && format !== "binary") return parseInt8;
        return pg.types.getTypeParser(oid, format);
      }) as typeof pg.types.getTypeParser,
    },
  });
  const onPoolError = options.onPoolError ?? (() => {});
  pool.on("error", (error) => onPoolError(error));
  try {
    const client = await pool.connect();
    client.release();
  } catch (error) {
    await pool.end().catch(() => {});
    throw new StoreError("ERR_STORE_CONNECT", `could not connect to PostgreSQL at ${target.description}`, {
      cause: error,
    });
  }
  const guard = new TransactionGuard();
  const dialect = new GuardedDialect(new PostgresDialect({ pool }), guard, undefined);
  const db = new Kysely<DB>({ dialect });
  return createHandle("postgres", db, guard, target.description, (channel, onNotify) =>
    listenPostgres(target.location, channel, onNotify),
  );
}

const CHANNEL_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

async function listenPostgres(
  url: string,
  channel: string,
  onNotify: () => void,
): Promise<() => Promise<void>> {
  if (!CHANNEL_NAME.test(channel)) {
    throw new StoreError("ERR_STORE_CONFIG", "a notification channel is a lower-case SQL identifier");
  }
  let stopped = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  const connect = async (): Promise<void> => {
    const next = new pg.Client({ connectionString: url });
    next.on("notification", (message) => {
      if (message.channel === channel) onNotify();
    });
    next.on("error", () => {
      // A lost connection: reconnect, and wake the listener in case a notification was missed.
      next.end().catch(() => {});
      if (!stopped) retry = setTimeout(() => void connect().catch(() => {}), 1_000);
      onNotify();
    });
    await next.connect();
    await next.query(`listen ${channel}`);
    client = next;
  };
  await connect();
  return async () => {
    stopped = true;
    clearTimeout(retry);
    await client?.end().catch(() => {});
  };
}

function createHandle<DB>(
  dialect: DialectName,
  db: Kysely<DB>,
  guard: TransactionGuard,
  description: string,
  listen: Database<DB>["listen"] = async () => async () => {},
  readNow: (query: CompiledQuery) => UnknownRow[] | undefined = () => undefined,
): Database<DB> {
  let closed: Promise<void> | undefined;
  return {
    dialect,
    db,
    description,
    transaction: (fn) => {
      guard.check();
      // The connection is taken (and BEGIN sent) before the guard marks the context as inside.
      return db.transaction().execute((trx) => guard.inside(() => fn(trx)));
    },
    async read<R>(query: CompiledQuery<R>): Promise<R[]> {
      const rows = readNow(query);
      if (rows !== undefined) return rows as R[];
      return (await db.executeQuery(query)).rows;
    },
    listen,
    close: () => {
      closed ??= db.destroy();
      return closed;
    },
  };
}

/**
 * Knows whether the current async context is inside a `transaction(fn)` of one handle, so that a
 * query sent to the handle instead of the transaction fails at once rather than deadlocking on
 * SQLite's single connection (or silently running outside the transaction on PostgreSQL).
 */
class TransactionGuard {
  readonly #storage = new AsyncLocalStorage<{ active: boolean }>();

  async inside<T>(fn: () => Promise<T>): Promise<T> {
    const state = { active: true };
    try {
      return await this.#storage.run(state, fn);
    } finally {
      state.active = false;
    }
  }

  check(): void {
    if (this.#storage.getStore()?.active) {
      throw new StoreError(
        "ERR_STORE_NESTED_TRANSACTION",
        "a query used the database handle inside a transaction of the same handle; use the transaction object passed to the callback",
      );
    }
  }
}

/**
 * Hands SQLite's one connection to waiters in order, one at a time. Kysely's own mutex wakes every
 * waiter on each release and all but one wait again: with thousands of queries queued (a burst of
 * enqueues) that is quadratic, and it dominated a webhook fan-out profile.
 */
class FifoGate {
  #busy = false;
  readonly #waiting: (() => void)[] = [];
  #head = 0;

  enter(): Promise<void> | undefined {
    if (!this.#busy) {
      this.#busy = true;
      return undefined;
    }
    return new Promise<void>((resolve) => this.#waiting.push(resolve));
  }

  leave(): void {
    const next = this.#waiting[this.#head];
    if (next === undefined) {
      this.#busy = false;
      return;
    }
    this.#waiting[this.#head] = undefined as never;
    this.#head += 1;
    if (this.#head > 1024 && this.#head * 2 > this.#waiting.length) {
      this.#waiting.splice(0, this.#head);
      this.#head = 0;
    }
    next();
  }
}

class GuardedDialect implements KyselyDialect {
  readonly #inner: KyselyDialect;
  readonly #guard: TransactionGuard;
  readonly #begin: string | undefined;
  readonly #gate: FifoGate | undefined;

  constructor(inner: KyselyDialect, guard: TransactionGuard, begin: string | undefined, gate?: FifoGate) {
    this.#inner = inner;
    this.#guard = guard;
    this.#begin = begin;
    this.#gate = gate;
  }

  createDriver(): Driver {
    return new GuardedDriver(this.#inner.createDriver(), this.#guard, this.#begin, this.#gate);
  }
  createQueryCompiler() {
    return this.#inner.createQueryCompiler();
  }
  createAdapter() {
    return this.#inner.createAdapter();
  }
  createIntrospector(db: Parameters<KyselyDialect["createIntrospector"]>[0]) {
    return this.#inner.createIntrospector(db);
  }
}

class GuardedDriver implements Driver {
  readonly #inner: Driver;
  readonly #guard: TransactionGuard;
  readonly #begin: string | undefined;
  readonly #gate: FifoGate | undefined;

  constructor(inner: Driver, guard: TransactionGuard, begin: string | undefined, gate: FifoGate | undefined) {
    this.#inner = inner;
    this.#guard = guard;
    this.#begin = begin;
    this.#gate = gate;
  }

  init(): Promise<void> {
    return this.#inner.init();
  }
  async acquireConnection(): Promise<DatabaseConnection> {
    // Queries on a transaction object never come here: they reuse the transaction's connection.
    this.#guard.check();
    const waiting = this.#gate?.enter();
    if (waiting !== undefined) await waiting;
    try {
      return await this.#inner.acquireConnection();
    } catch (error) {
      this.#gate?.leave();
      throw error;
    }
  }
  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    if (this.#begin === undefined) return this.#inner.beginTransaction(connection, settings);
    await connection.executeQuery(CompiledQuery.raw(this.#begin));
  }
  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.#inner.commitTransaction(connection);
  }
  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.#inner.rollbackTransaction(connection);
  }
  savepoint(...args: Parameters<NonNullable<Driver["savepoint"]>>): Promise<void> {
    if (!this.#inner.savepoint)
      throw new StoreError("ERR_STORE_CONFIG", "this engine does not support savepoints");
    return this.#inner.savepoint(...args);
  }
  rollbackToSavepoint(...args: Parameters<NonNullable<Driver["rollbackToSavepoint"]>>): Promise<void> {
    if (!this.#inner.rollbackToSavepoint) {
      throw new StoreError("ERR_STORE_CONFIG", "this engine does not support savepoints");
    }
    return this.#inner.rollbackToSavepoint(...args);
  }
  releaseSavepoint(...args: Parameters<NonNullable<Driver["releaseSavepoint"]>>): Promise<void> {
    if (!this.#inner.releaseSavepoint) {
      throw new StoreError("ERR_STORE_CONFIG", "this engine does not support savepoints");
    }
    return this.#inner.releaseSavepoint(...args);
  }
  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    try {
      await this.#inner.releaseConnection(connection);
    } finally {
      this.#gate?.leave();
    }
  }
  destroy(): Promise<void> {
    return this.#inner.destroy();
  }
}

/** Narrows the bigints better-sqlite3 returns (safe-integer mode) to numbers, refusing lossy ones. */
class SafeIntegerPlugin implements KyselyPlugin {
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    narrowRows(args.result.rows);
    return args.result;
  }
}

function narrowRows(rows: readonly UnknownRow[]): void {
  for (const row of rows) {
    for (const key in row) {
      const value = row[key];
      if (typeof value === "bigint") (row as Record<string, unknown>)[key] = narrowBigint(value);
    }
  }
}

const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

function narrowBigint(value: bigint): number {
  if (value < MIN_SAFE || value > MAX_SAFE) {
    throw new StoreError(
      "ERR_STORE_INTEGER_OVERFLOW",
      "an integer from the database does not fit a JavaScript number",
    );
  }
  return Number(value);
}
