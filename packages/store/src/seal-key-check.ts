import { createHmac } from "node:crypto";
import { sql } from "kysely";
import { StoreError } from "./errors.js";
import type { Database } from "./handle.js";
import { type Keyring, masterKey } from "./keyring.js";
import { defineMigrations, migrate } from "./migrations.js";

/**
 * Every process on one database must seal with the same keys: a process with a
 * keyring of its own would seal values the others cannot open. The database remembers which key
 * each process started with as current, by id and by a one-way fingerprint of the key (never the
 * key), and a process whose keyring lacks the newest one, or holds a key of the same id with other
 * bytes, refuses to start with one line that says how to share the keys.
 */
export const sealKeyCheckMigrations = defineMigrations("store-seal-keys", [
  {
    version: 1,
    name: "seal_key_fingerprints",
    async up(db, { types }) {
      await db.schema
        .createTable("store_seal_keys")
        .addColumn("key_id", "text", (c) => c.primaryKey())
        .addColumn("fingerprint", "text", (c) => c.notNull())
        .addColumn("recorded_at", types.timestamp, (c) => c.notNull())
        .execute();
    },
  },
]);

export const SEAL_KEYS_FIX =
  "give every process the same seal keys: copy them with `doorbell keys export` on a process that works and `doorbell keys import` here, or set the same DOORBELL_SEAL_KEYS / --key-file on every process (docs/operations.md)";

/** A one-way fingerprint of a key: HMAC-SHA256 keyed by the key over a fixed label. */
export function keyFingerprint(keyring: Keyring, keyId: string): string {
  return createHmac("sha256", masterKey(keyring, keyId))
    .update("doorbell.seal-keys.fingerprint")
    .digest("base64url")
    .slice(0, 22);
}

/**
 * Checks this process's keyring against the database and records its current key. Throws
 * ERR_STORE_KEYRING_MISMATCH (one line naming the fix) when the keyring cannot open what the
 * other processes seal.
 */
export async function checkSealKeys(
  store: Database,
  keyring: Keyring,
  now: () => number = Date.now,
): Promise<void> {
  await migrate(store, [sealKeyCheckMigrations]);
  const { rows } = await sql<{ key_id: string; fingerprint: string; recorded_at: number }>`
    select key_id, fingerprint, recorded_at from store_seal_keys order by recorded_at desc, key_id`.execute(
    store.db,
  );
  for (const row of rows) {
    if (keyring.has(row.key_id) && keyFingerprint(keyring, row.key_id) !== row.fingerprint) {
      throw mismatch(`seal key ${row.key_id} here is not the key of that id the database was sealed with`);
    }
  }
  const newest = rows[0];
  if (newest !== undefined && !keyring.has(newest.key_id)) {
    throw mismatch(`this process's seal keys lack key ${newest.key_id}, which the other processes seal with`);
  }
  const current = keyring.currentKeyId;
  const fingerprint = keyFingerprint(keyring, current);
  // The newest current key is the one every later process must hold (a rotation moves it on).
  if (newest?.key_id !== current) {
    await sql`
      insert into store_seal_keys (key_id, fingerprint, recorded_at) values (${current}, ${fingerprint}, ${Math.max(now(), (newest?.recorded_at ?? 0) + 1)})
      on conflict (key_id) do update set recorded_at = excluded.recorded_at`.execute(store.db);
  }
}

function mismatch(what: string): StoreError {
  return new StoreError("ERR_STORE_KEYRING_MISMATCH", `${what}: ${SEAL_KEYS_FIX}`);
}
