import { type CreateTableBuilder, type Kysely, sql } from "kysely";
import { StoreError } from "./errors.js";
import type { Database, DialectName } from "./handle.js";
import { autoIdColumn, type ColumnTypes, columnTypes } from "./schema.js";
import { asTables } from "./tables.js";

/** What a migration gets besides the database: the engine and portable column types. */
export interface MigrationContext {
  readonly dialect: DialectName;
  readonly types: ColumnTypes;
  /** See {@link autoIdColumn}: `db.schema.createTable("t").$call(ctx.autoId("id"))`. */
  autoId<N extends string>(
    name: N,
  ): <TB extends string, C extends string>(
    builder: CreateTableBuilder<TB, C>,
  ) => CreateTableBuilder<TB, C | N>;
}

/**
 * One step of one package's schema. Versions run 1, 2, 3, … and never change once released: fix a
 * mistake with a new version. `up` runs inside a transaction; use the `db` it receives.
 */
export interface Migration {
  readonly version: number;
  readonly name: string;
  up(db: Kysely<unknown>, ctx: MigrationContext): Promise<void>;
}

/** The migrations a package owns, for the tables it owns. */
export interface PackageMigrations {
  readonly package: string;
  readonly migrations: readonly Migration[];
}

export interface AppliedMigration {
  readonly package: string;
  readonly version: number;
  readonly name: string;
  /** Epoch milliseconds. */
  readonly appliedAt: number;
}

export interface MigrateOptions {
  /** Clock for `applied_at`, epoch milliseconds (default `Date.now`). */
  now?: () => number;
  /** PostgreSQL: how long to wait for another process's migration lock, in ms (default 60000). */
  lockTimeoutMs?: number;
}

export interface MigrationReport {
  /** What this call applied, in order; empty when the schema was already current. */
  readonly applied: readonly { package: string; version: number; name: string }[];
}

/** The table recording applied migrations. Its own shape is fixed: the store never migrates it. */
export const MIGRATIONS_TABLE = "doorbell_migrations";

interface MigrationRow {
  package: string;
  version: number;
  name: string;
  applied_at: number;
}
interface MigrationTables {
  [MIGRATIONS_TABLE]: MigrationRow;
}

const PACKAGE_NAME = /^[a-z][a-z0-9-]{0,62}$/;
const MIGRATION_NAME = /^[a-z0-9][a-z0-9_]{0,99}$/;
/** pg_advisory_lock(int4, int4) keys: "door", "bell" in ASCII. */
const LOCK_KEY_1 = 0x646f6f72;
const LOCK_KEY_2 = 0x62656c6c;
const LOCK_NOT_AVAILABLE = "55P03";

/** Checks a package's migration list once, where it is declared, and returns it frozen. */
export function defineMigrations(pkg: string, migrations: readonly Migration[]): PackageMigrations {
  validatePackage({ package: pkg, migrations });
  return Object.freeze({ package: pkg, migrations: Object.freeze([...migrations]) });
}

function validatePackage(entry: PackageMigrations): void {
  if (typeof entry.package !== "string" || !PACKAGE_NAME.test(entry.package)) {
    throw new StoreError(
      "ERR_STORE_MIGRATION_INVALID",
      "a migration package name must be lower-case letters, digits and dashes, starting with a letter",
    );
  }
  if (!Array.isArray(entry.migrations)) {
    throw new StoreError("ERR_STORE_MIGRATION_INVALID", `migrations of ${entry.package} must be an array`);
  }
  entry.migrations.forEach((migration, index) => {
    const expected = index + 1;
    if (migration.version !== expected) {
      throw new StoreError(
        "ERR_STORE_MIGRATION_INVALID",
        `migrations of ${entry.package} must be numbered 1, 2, 3, … in order; position ${expected} has version ${String(migration.version)}`,
      );
    }
    if (typeof migration.name !== "string" || !MIGRATION_NAME.test(migration.name)) {
      throw new StoreError(
        "ERR_STORE_MIGRATION_INVALID",
        `migration ${entry.package}#${expected} needs a snake_case name`,
      );
    }
    if (typeof migration.up !== "function") {
      throw new StoreError(
        "ERR_STORE_MIGRATION_INVALID",
        `migration ${entry.package}#${expected} has no up()`,
      );
    }
  });
}

/**
 * Brings every listed package's tables up to date, in the order given (list a package before the
 * packages whose tables reference it). Each migration runs in its own transaction together with
 * its record, so a crash leaves the database at a whole version. Running it again is a no-op.
 *
 * Refuses (`ERR_STORE_SCHEMA_TOO_NEW`) when the database has a version of a package that the code
 * does not know, and (`ERR_STORE_MIGRATION_MISMATCH`) when a recorded name differs from the code's.
 * On PostgreSQL a session advisory lock serialises concurrent starts; on SQLite every migration's
 * transaction takes the write lock (`BEGIN IMMEDIATE`) and re-checks its record first.
 */
export async function migrate<DB>(
  handle: Database<DB>,
  packages: readonly PackageMigrations[],
  options: MigrateOptions = {},
): Promise<MigrationReport> {
  const seen = new Set<string>();
  for (const entry of packages) {
    validatePackage(entry);
    if (seen.has(entry.package)) {
      throw new StoreError("ERR_STORE_MIGRATION_INVALID", `migrations of ${entry.package} are listed twice`);
    }
    seen.add(entry.package);
  }
  const now = options.now ?? Date.now;
  const db = asTables<MigrationTables>(handle.db);
  if (handle.dialect === "sqlite") return runMigrations(db, handle.dialect, packages, now);

  const lockTimeoutMs = options.lockTimeoutMs ?? 60_000;
  if (!Number.isSafeInteger(lockTimeoutMs) || lockTimeoutMs < 0) {
    throw new StoreError("ERR_STORE_CONFIG", "lockTimeoutMs must be a non-negative integer");
  }
  return db.connection().execute(async (conn) => {
    await sql`select set_config('lock_timeout', ${`${lockTimeoutMs}ms`}, false)`.execute(conn);
    try {
      await sql`select pg_advisory_lock(${LOCK_KEY_1}::int4, ${LOCK_KEY_2}::int4)`.execute(conn);
    } catch (error) {
      await sql`reset lock_timeout`.execute(conn).catch(() => {});
      if (pgCode(error) === LOCK_NOT_AVAILABLE) {
        throw new StoreError(
          "ERR_STORE_MIGRATION_LOCKED",
          `another process held the migration lock for more than ${lockTimeoutMs} ms`,
          { cause: error },
        );
      }
      throw error;
    }
    try {
      await sql`reset lock_timeout`.execute(conn);
      return await runMigrations(conn, handle.dialect, packages, now);
    } finally {
      await sql`select pg_advisory_unlock(${LOCK_KEY_1}::int4, ${LOCK_KEY_2}::int4)`
        .execute(conn)
        .catch(() => {});
    }
  });
}

function pgCode(error: unknown): string | undefined {
  return typeof error === "object" && error !== null && "code" in error && typeof error.code === "string"
    ? error.code
    : undefined;
}

async function ensureMigrationsTable(db: Kysely<MigrationTables>): Promise<void> {
  await db.schema
    .createTable(MIGRATIONS_TABLE)
    .ifNotExists()
    .addColumn("package", "text", (col) => col.notNull())
    .addColumn("version", "integer", (col) => col.notNull())
    .addColumn("name", "text", (col) => col.notNull())
    .addColumn("applied_at", "bigint", (col) => col.notNull())
    .addPrimaryKeyConstraint(`${MIGRATIONS_TABLE}_pkey`, ["package", "version"])
    .execute();
}

async function runMigrations(
  db: Kysely<MigrationTables>,
  dialect: DialectName,
  packages: readonly PackageMigrations[],
  now: () => number,
): Promise<MigrationReport> {
  await ensureMigrationsTable(db);
  const rows = await db.selectFrom(MIGRATIONS_TABLE).selectAll().execute();

  // Check everything before changing anything.
  const plan: { entry: PackageMigrations; pending: Migration[] }[] = [];
  for (const entry of packages) {
    const recorded = rows
      .filter((row) => row.package === entry.package)
      .sort((a, b) => a.version - b.version);
    const known = entry.migrations.length;
    const newest = recorded.at(-1)?.version ?? 0;
    if (newest > known) {
      throw new StoreError(
        "ERR_STORE_SCHEMA_TOO_NEW",
        `the database has ${entry.package} schema version ${newest} but this code knows only up to ${known}; run a newer Doorbell or restore a matching backup`,
      );
    }
    recorded.forEach((row, index) => {
      const migration = entry.migrations[row.version - 1];
      if (row.version !== index + 1 || migration === undefined || migration.name !== row.name) {
        throw new StoreError(
          "ERR_STORE_MIGRATION_MISMATCH",
          `the database records ${entry.package} migration ${row.version} as "${row.name}", which this code does not have at that version`,
        );
      }
    });
    plan.push({ entry, pending: entry.migrations.slice(recorded.length) });
  }

  const context: MigrationContext = {
    dialect,
    types: columnTypes(dialect),
    autoId: (name) => autoIdColumn(dialect, name),
  };
  const applied: { package: string; version: number; name: string }[] = [];
  for (const { entry, pending } of plan) {
    for (const migration of pending) {
      const didApply = await db.transaction().execute(async (trx) => {
        const already = await trx
          .selectFrom(MIGRATIONS_TABLE)
          .select("name")
          .where("package", "=", entry.package)
          .where("version", "=", migration.version)
          .executeTakeFirst();
        if (already) return false; // another process applied it between our check and our lock
        try {
          await migration.up(asTables<unknown>(trx), context);
        } catch (error) {
          throw new StoreError(
            "ERR_STORE_MIGRATION_FAILED",
            `migration ${entry.package}#${migration.version} "${migration.name}" failed and was rolled back`,
            { cause: error },
          );
        }
        await trx
          .insertInto(MIGRATIONS_TABLE)
          .values({
            package: entry.package,
            version: migration.version,
            name: migration.name,
            applied_at: now(),
          })
          .execute();
        return true;
      });
      if (didApply)
        applied.push({ package: entry.package, version: migration.version, name: migration.name });
    }
  }
  return { applied };
}

/** The migrations recorded in the database, by package then version; empty before the first `migrate`. */
export async function appliedMigrations<DB>(handle: Database<DB>): Promise<AppliedMigration[]> {
  const db = asTables<MigrationTables>(handle.db);
  const tables = await db.introspection.getTables();
  if (!tables.some((table) => table.name === MIGRATIONS_TABLE)) return [];
  const rows = await db
    .selectFrom(MIGRATIONS_TABLE)
    .selectAll()
    .orderBy("package")
    .orderBy("version")
    .execute();
  return rows.map((row) => ({
    package: row.package,
    version: row.version,
    name: row.name,
    appliedAt: row.applied_at,
  }));
}

/**
 * Whether every migration of these packages is applied: a readiness check (/readyz),
 * one small query. False while another process's migration is still running, or when the database
 * is behind this code.
 */
export async function migrationsCurrent<DB>(
  handle: Database<DB>,
  packages: readonly PackageMigrations[],
): Promise<boolean> {
  const db = asTables<MigrationTables>(handle.db);
  const rows = await db
    .selectFrom(MIGRATIONS_TABLE)
    .select(["package", (eb) => eb.fn.max("version").as("version")])
    .groupBy("package")
    .execute();
  const applied = new Map(rows.map((row) => [row.package, Number(row.version)]));
  return packages.every((entry) => {
    const latest = Math.max(0, ...entry.migrations.map((migration) => migration.version));
    return (applied.get(entry.package) ?? 0) >= latest;
  });
}
