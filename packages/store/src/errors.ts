import { CodedError } from "@doorbell/errors";

/**
 * Stable codes, one per way the store can refuse. Messages are plain words and never carry a key,
 * a plaintext, a sealed value or a database password.
 */
export type StoreErrorCode =
  /** The database configuration (URL, path, option) is not usable. */
  | "ERR_STORE_CONFIG"
  /** The database could not be opened or reached. */
  | "ERR_STORE_CONNECT"
  /** A query on the handle ran inside a transaction of the same handle (it would deadlock or escape the transaction). */
  | "ERR_STORE_NESTED_TRANSACTION"
  /** A migration list is malformed (package name, versions, names). */
  | "ERR_STORE_MIGRATION_INVALID"
  /** The database records a migration that differs from the one the code has under the same version. */
  | "ERR_STORE_MIGRATION_MISMATCH"
  /** The database was migrated by a newer version of the code. */
  | "ERR_STORE_SCHEMA_TOO_NEW"
  /** Another process held the migration lock for longer than the lock timeout. */
  | "ERR_STORE_MIGRATION_LOCKED"
  /** A migration threw; it was rolled back. */
  | "ERR_STORE_MIGRATION_FAILED"
  /** A commit could not be made durable (SQLite: the fsync of the WAL failed); the handle refuses further work. */
  | "ERR_STORE_IO"
  /** An integer read from the database does not fit a JavaScript number exactly. */
  | "ERR_STORE_INTEGER_OVERFLOW"
  /** Seal keys are malformed (entry format, key length, duplicate key id). */
  | "ERR_STORE_KEYRING_INVALID"
  /** No seal keys were configured and no data directory was given to keep a generated key file. */
  | "ERR_STORE_KEYRING_MISSING"
  /** The key file cannot be read, written, or is readable by other users. */
  | "ERR_STORE_KEY_FILE"
  /** This process's seal keys differ from the ones the other processes on the database seal with. */
  | "ERR_STORE_KEYRING_MISMATCH"
  /** A sealed value names a key id the keyring does not hold. */
  | "ERR_STORE_UNKNOWN_KEY"
  /** A value is not in the sealed format. */
  | "ERR_STORE_SEALED_MALFORMED"
  /** A sealed value failed authentication: tampered, sealed for other associated data, or under another key. */
  | "ERR_STORE_UNSEAL_FAILED"
  /** A code hash purpose or a stored code hash is malformed. */
  | "ERR_STORE_CODE_HASH_INVALID"
  /** This process no longer leads a piece of background work (another took over, or the lease could not be renewed). */
  | "ERR_STORE_LEADERSHIP_LOST"
  /** The test harness is misconfigured (e.g. no PostgreSQL URL in CI). */
  | "ERR_STORE_TEST_SETUP";

export class StoreError extends CodedError<StoreErrorCode> {
  override readonly name = "StoreError";
}

export const isStoreError = (value: unknown): value is StoreError => value instanceof StoreError;
