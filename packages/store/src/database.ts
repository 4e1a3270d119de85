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
  type TransactionSettings,
  type UnknownRow,
} from "kysely";
import pg from "pg";
import { Checkpointer, TARGET_PAGES } from "./checkpointer.js";
import { StoreError } from "./errors.js";
import type { Database, DatabaseConfig, DialectName, NoTables } from "./handle.js";
import { notifyPostgres, notifySqlite, PostgresNotifications, SqliteNotifications } from "./notifications.js";
import { preparingPool } from "./prepared.js";

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
    // `full` without a file has nothing to make durable: SQLite's FULL, as asked.
    native.pragma(
      `synchronous = ${synchronous === "full" && !inMemory ? "NORMAL" : synchronous.toUpperCase()}`,
    );
    native.pragma("foreign_keys = ON");
    // Checkpoints run on a thread of their own (checkpointer.ts), not inside a commit.
    if (!inMemory) native.pragma("wal_autocheckpoint = 0");
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
  const wal = synchronous === "full" && !inMemory ? new WalSync(`${target.location}-wal`) : undefined;
  const statements = withStatementCache(native, (statement) => {
    // Every statement Kysely runs is prepared here first, and runs right after.
    if (!statement.readonly) wal?.writing(native.inTransaction);
  });
  const gate = new FifoGate();
  const checkpointer = inMemory
    ? undefined
    : new Checkpointer(target.location, gate, () => native.pragma(`wal_autocheckpoint = ${TARGET_PAGES}`));
  const dialect = new GuardedDialect(new SqliteDialect({ database: statements }), guard, "begin immediate", {
    gate,
    durability: wal,
    onCommit: checkpointer && (() => checkpointer.committed()),
  });
  const db = new Kysely<DB>({ dialect, plugins: [new SafeIntegerPlugin()] });
  // While the connection is held, `read` runs on a second, read-only connection of the same file:
  // it sees what is committed (never the open transaction) and does not wait for the writer. In
  // memory there is no second connection to the same data.
  let reader: BetterSqlite3.Database | undefined;
  if (!inMemory) {
    try {
      reader = new BetterSqlite3(target.location, { readonly: true });
      reader.pragma(`busy_timeout = ${busyTimeoutMs}`);
      reader.defaultSafeIntegers(true);
    } catch (error) {
      reader?.close();
      native.close();
      throw new StoreError(
        "ERR_STORE_CONNECT",
        `could not open the SQLite database at ${target.description}`,
        {
          cause: error,
        },
      );
    }
  }
  const readStatements = reader && withStatementCache(reader);
  const readNow: ReadNow = (query, arrays) => {
    wal?.check();
    // The write connection when nobody holds it: its page cache stays warm through its own
    // commits, while every commit makes the second connection drop its cache.
    const free = !gate.busy && !native.inTransaction;
    if (!free && !readStatements) return undefined;
    const statement = (free ? statements : (readStatements as typeof statements)).prepare(query.sql);
    if (!statement.reader || !statement.readonly) {
      throw new StoreError("ERR_STORE_CONFIG", "read() takes a query that returns rows");
    }
    // Taken before the read: every commit the read can see has completed by now.
    const position = wal?.position;
    let rows: UnknownRow[] | unknown[][];
    if (arrays) {
      // The statement is cached and shared: back to objects at once (this runs synchronously).
      statement.raw(true);
      try {
        rows = statement.all(...(query.parameters as unknown[])) as unknown[][];
      } finally {
        statement.raw(false);
      }
      narrowArrays(rows);
    } else {
      rows = statement.all(...(query.parameters as unknown[])) as UnknownRow[];
      narrowRows(rows);
    }
    // The rows may come from a commit whose fsync is still running: answer once it is done.
    const durable = position === undefined ? undefined : wal?.until(position);
    return durable === undefined ? rows : durable.then(() => rows);
  };
  // Followed on the second connection, which sees this process's commits as well as others';
  // in memory there is only the one, read between transactions.
  const notifications = new SqliteNotifications(
    reader ?? native,
    () => reader === undefined && (gate.busy || native.inTransaction),
    reader !== undefined,
  );
  const handle = createHandle(
    "sqlite",
    db,
    guard,
    target.description,
    async (channel, onNotify) => notifications.listen(channel, onNotify),
    readNow,
    async () => {
      notifications.stop();
      reader?.close();
      await Promise.all([wal?.close(), checkpointer?.close()]);
    },
  );
  return {
    ...handle,
    notify: (channel, payload, on) =>
      notifySqlite(on ?? (db as Kysely<unknown>), channel, payload, Date.now()),
  };
}

/** fsyncs of one WAL at a time: a second lets a commit skip waiting for one that started before it. */
const MAX_FSYNCS = 2;

/**
 * `synchronous: "full"` without blocking the event loop. SQLite runs with `synchronous=NORMAL`,
 * which in WAL mode differs from FULL only in not syncing the WAL at each commit; this syncs it
 * instead, on the thread pool. Commits (and writes outside a transaction) are counted as they
 * run; whoever used the database (a commit, or a read that may have seen a commit) is answered
 * only once an fsync that started after everything counted by then is done.
 * So nobody learns of a commit, or of data it wrote, before it is durable (what FULL promises),
 * while the connection serves the next query during the fsync and one fsync covers every commit
 * completed before it started (group commit: the WAL is append-only, so a later fsync covers all
 * earlier frames, and recovery never keeps a later commit without the earlier ones). Another
 * handle or process on the same file can see a commit up to one fsync before it is durable.
 * A failed fsync leaves durability unknown, so the handle refuses all further work (fail-stop).
 */
class WalSync {
  readonly #path: string;
  #fd: number | undefined;
  /** A statement that may write ran in the open transaction. */
  #dirty = false;
  /** Commits (and lone writes) completed, and how many of them are known durable. */
  #completed = 0;
  #durable = 0;
  /** The fsyncs in progress, each with the position it covers. */
  readonly #running = new Set<{ covers: number; done: Promise<void> }>();
  #failed: Error | undefined;

  constructor(path: string) {
    this.#path = path;
  }

  /**
   * A statement that may write is about to run (synchronously, right after this). Outside a
   * transaction it completes as it runs; inside one, at COMMIT (`committing`). Counted before it
   * runs, so a read or an fsync that starts later includes it.
   */
  writing(inTransaction: boolean): void {
    if (inTransaction) this.#dirty = true;
    else this.#completed += 1;
  }

  /** COMMIT is about to run. */
  committing(): void {
    if (this.#dirty) this.#completed += 1;
    this.#dirty = false;
  }

  check(): void {
    if (this.#failed) {
      throw new StoreError(
        "ERR_STORE_IO",
        "a commit could not be made durable (fsync failed); reopen the database",
        { cause: this.#failed },
      );
    }
  }

  /** Everything completed so far: what anyone reading now may see. */
  get position(): number {
    return this.#completed;
  }

  /** Resolves once everything completed up to `position` is on disk; undefined if it already is. */
  until(position: number): Promise<void> | undefined {
    this.check();
    return this.#durable >= position ? undefined : this.#wait(position);
  }

  async #wait(position: number): Promise<void> {
    while (this.#durable < position) {
      // An fsync running covers `position` only if it started after it was reached. If none
      // does, a new one starts at once rather than after them (the kernel orders them), up to
      // MAX_FSYNCS at a time; past that, wait for the newest and look again.
      let newest: Promise<void> | undefined;
      let covering: Promise<void> | undefined;
      for (const running of this.#running) {
        newest = running.done;
        if (running.covers >= position) covering = running.done;
      }
      if (covering) await covering;
      else if (this.#running.size < MAX_FSYNCS) await this.#start();
      else await newest;
    }
  }

  #start(): Promise<void> {
    const covers = this.#completed;
    const done = this.#fsync(covers);
    const running = { covers, done };
    this.#running.add(running);
    const forget = () => this.#running.delete(running);
    done.then(forget, forget);
    return done;
  }

  async #fsync(covers: number): Promise<void> {
    try {
      // Linux syncs the file, not the descriptor: any descriptor of the WAL will do.
      this.#fd ??= fs.openSync(this.#path, "r");
      const fd = this.#fd;
      await new Promise<void>((resolve, reject) =>
        fs.fsync(fd, (error) => (error ? reject(error) : resolve())),
      );
      this.#durable = Math.max(this.#durable, covers);
    } catch (error) {
      this.#failed ??= error as Error;
      this.check();
    }
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.#running].map((running) => running.done));
    if (this.#fd !== undefined) fs.closeSync(this.#fd);
    this.#fd = undefined;
  }
}

/** Prepared statements kept per SQL text; preparing costs about 10 µs, more than many queries. */
const STATEMENT_CACHE_SIZE = 256;

/**
 * Kysely prepares every query afresh. better-sqlite3 statements are reusable (every call binds its
 * own parameters and runs to completion synchronously), so the same SQL text reuses one statement;
 * the least recently used is dropped past the bound. SQLite re-prepares a statement by itself
 * after a schema change.
 */
function withStatementCache(
  native: BetterSqlite3.Database,
  onPrepare?: (statement: BetterSqlite3.Statement) => void,
) {
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
      onPrepare?.(statement);
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
  const prepare = options.preparedStatements ?? process.env.DOORBELL_PG_PREPARED_STATEMENTS !== "off";
  const kyselyPool = prepare ? preparingPool(pool) : pool;
  const dialect = new GuardedDialect(new PostgresDialect({ pool: kyselyPool }), guard, undefined);
  const db = new Kysely<DB>({ dialect });
  const notifications = new PostgresNotifications(target.location);
  const handle = createHandle(
    "postgres",
    db,
    guard,
    target.description,
    (channel, onNotify) => notifications.listen(channel, onNotify),
    // Arrays straight from the pool (int8 parsed as for Kysely); objects through Kysely.
    (query, arrays) =>
      arrays
        ? pool
            .query({ text: query.sql, values: query.parameters as unknown[], rowMode: "array" })
            .then((result) => result.rows as unknown[][])
        : undefined,
    () => notifications.stop(),
  );
  return {
    ...handle,
    notify: (channel, payload, on) => notifyPostgres(on ?? (db as Kysely<unknown>), channel, payload),
    connections: () => ({ open: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
  };
}

/**
 * Runs a read at once, bypassing Kysely's executor, with rows as objects or (`arrays`) as arrays
 * of column values; undefined when it cannot, and Kysely runs it instead.
 */
type ReadNow = (
  query: CompiledQuery,
  arrays: boolean,
) => UnknownRow[] | unknown[][] | Promise<UnknownRow[] | unknown[][]> | undefined;

function createHandle<DB>(
  dialect: DialectName,
  db: Kysely<DB>,
  guard: TransactionGuard,
  description: string,
  listen: Database<DB>["listen"] = async () => async () => {},
  readNow: ReadNow = () => undefined,
  afterClose: () => Promise<void> | void = () => {},
): Omit<Database<DB>, "notify"> {
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
      guard.check();
      const rows = readNow(query, false);
      if (rows !== undefined) return (await rows) as R[];
      return (await db.executeQuery(query)).rows;
    },
    async readArrays(query) {
      guard.check();
      const rows = readNow(query, true);
      if (rows !== undefined) return (await rows) as unknown[][];
      // Object keys keep the order the query selects them in.
      return (await db.executeQuery(query)).rows.map((row) => Object.values(row as object));
    },
    listen,
    close: () => {
      closed ??= db.destroy().then(afterClose);
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

  /** Someone holds the connection (a query or a transaction). */
  get busy(): boolean {
    return this.#busy;
  }

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

/** SQLite's fsync of what was written (WalSync): the connection is released before it, its user answered after. */
interface Durability {
  /** Throws once a commit could not be made durable. */
  check(): void;
  committing(): void;
  /** Everything completed so far. */
  readonly position: number;
  until(position: number): Promise<void> | undefined;
}

/** What SQLite's one connection adds around Kysely's driver; PostgreSQL uses none of it. */
interface ConnectionHooks {
  /** Hands the one connection out in arrival order. */
  gate?: FifoGate;
  durability?: Durability;
  /** Runs as each COMMIT is sent (counting commits needs no wait for it to complete). */
  onCommit?: () => void;
}

class GuardedDialect implements KyselyDialect {
  readonly #inner: KyselyDialect;
  readonly #guard: TransactionGuard;
  readonly #begin: string | undefined;
  readonly #hooks: ConnectionHooks;

  constructor(
    inner: KyselyDialect,
    guard: TransactionGuard,
    begin: string | undefined,
    hooks: ConnectionHooks = {},
  ) {
    this.#inner = inner;
    this.#guard = guard;
    this.#begin = begin;
    this.#hooks = hooks;
  }

  createDriver(): Driver {
    return new GuardedDriver(this.#inner.createDriver(), this.#guard, this.#begin, this.#hooks);
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
  readonly #durability: Durability | undefined;
  readonly #onCommit: (() => void) | undefined;

  constructor(inner: Driver, guard: TransactionGuard, begin: string | undefined, hooks: ConnectionHooks) {
    this.#inner = inner;
    this.#guard = guard;
    this.#begin = begin;
    this.#gate = hooks.gate;
    this.#durability = hooks.durability;
    this.#onCommit = hooks.onCommit;
  }

  init(): Promise<void> {
    return this.#inner.init();
  }
  async acquireConnection(): Promise<DatabaseConnection> {
    // Queries on a transaction object never come here: they reuse the transaction's connection.
    this.#guard.check();
    this.#durability?.check();
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
    // Synchronously before COMMIT runs (the inner driver runs it before its first await).
    this.#durability?.committing();
    // A checkpoint asked for now waits for the gate, which this transaction holds until it is done.
    this.#onCommit?.();
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
    const position = this.#durability?.position;
    try {
      await this.#inner.releaseConnection(connection);
    } finally {
      this.#gate?.leave();
    }
    // Kysely releases after a lone query and after COMMIT/ROLLBACK, and settles the caller's
    // promise only after this: nobody hears of a commit, or of what it wrote, before it is durable.
    const durable = position === undefined ? undefined : this.#durability?.until(position);
    if (durable !== undefined) await durable;
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

function narrowArrays(rows: readonly unknown[][]): void {
  for (const row of rows) {
    for (let i = 0; i < row.length; i++) {
      const value = row[i];
      if (typeof value === "bigint") row[i] = narrowBigint(value);
    }
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
