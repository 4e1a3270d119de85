// The query layer, re-exported so packages build queries with the same Kysely the store opened.
export {
  type ColumnType,
  type Generated,
  type Insertable,
  type Kysely,
  PostgresAdapter,
  type Selectable,
  sql,
  type Transaction,
  type Updateable,
} from "kysely";
export { isDatabaseBusy } from "./busy.js";
export { type CodeHasher, constantTimeEqual, createCodeHasher } from "./code-hasher.js";
export { type ConstraintViolation, constraintViolation } from "./constraint.js";
export { openDatabase } from "./database.js";
export { isStoreError, StoreError, type StoreErrorCode } from "./errors.js";
export type { Database, DatabaseConfig, DialectName, NoTables, PoolConnections } from "./handle.js";
export {
  formatKeyring,
  GENERATED_KEY_FILE,
  generateKeyEntry,
  type KeyEntry,
  Keyring,
  type LoadedKeyring,
  type LoadKeyringOptions,
  loadKeyring,
  parseKeyring,
  type RandomBytes,
  SEAL_KEYS_ENV,
} from "./keyring.js";
export {
  createLeadership,
  type Leadership,
  type LeadershipOptions,
  leadershipMigrations,
} from "./leadership.js";
export {
  type AppliedMigration,
  appliedMigrations,
  defineMigrations,
  MIGRATIONS_TABLE,
  type MigrateOptions,
  type Migration,
  type MigrationContext,
  type MigrationReport,
  migrate,
  migrationsCurrent,
  type PackageMigrations,
} from "./migrations.js";
export { MAX_PAYLOAD_BYTES, notificationMigrations, SQLITE_POLL_MS } from "./notifications.js";
export { type ResealColumnOptions, resealColumn } from "./reseal.js";
export { autoIdColumn, type ColumnTypes, columnTypes } from "./schema.js";
export { checkSealKeys, keyFingerprint, SEAL_KEYS_FIX, sealKeyCheckMigrations } from "./seal-key-check.js";
export { createSealer, type Sealer, type SealerOptions } from "./sealer.js";
export { asTables } from "./tables.js";
