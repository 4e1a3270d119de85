import { sql } from "kysely";
import { StoreError } from "./errors.js";
import type { Database } from "./handle.js";
import type { Sealer } from "./sealer.js";

export interface ResealColumnOptions {
  table: string;
  /** A unique, orderable column (the primary key). */
  keyColumn: string;
  /** The column holding sealed values (NULLs are skipped). */
  column: string;
  /** The associated data each row's value was sealed with, from the row's key. */
  associatedData: (key: string | number) => string | Uint8Array;
  /** Rows per transaction (default 100). */
  batchSize?: number;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/**
 * Rotation for one column: seals again, under the current key, every value sealed under an older
 * key, a batch per transaction. A row whose value changed since it was read is left alone (it was
 * just written, so it is already current). Run it after putting a new key first in the keyring;
 * when it reports 0 for every sealed column, the old key can leave the keyring.
 */
export async function resealColumn<DB>(
  handle: Database<DB>,
  sealer: Sealer,
  options: ResealColumnOptions,
): Promise<{ resealed: number }> {
  for (const name of [options.table, options.keyColumn, options.column]) {
    if (!IDENTIFIER.test(name))
      throw new StoreError("ERR_STORE_CONFIG", "reseal needs plain table and column names");
  }
  const batchSize = options.batchSize ?? 100;
  if (!Number.isSafeInteger(batchSize) || batchSize < 1) {
    throw new StoreError("ERR_STORE_CONFIG", "batchSize must be a positive integer");
  }
  const db = handle.db;
  const table = sql.table(options.table);
  const key = sql.ref(options.keyColumn);
  const column = sql.ref(options.column);
  const current = `v1.${sealer.currentKeyId}.`;
  let after: string | number | undefined;
  let resealed = 0;
  for (;;) {
    const rows = (
      await sql<{ k: string | number; v: string }>`
        select ${key} as k, ${column} as v from ${table}
        where ${column} is not null
          and substr(${column}, 1, ${current.length}) <> ${current}
          ${after === undefined ? sql`` : sql`and ${key} > ${after}`}
        order by ${key}
        limit ${batchSize}`.execute(db)
    ).rows;
    if (rows.length === 0) return { resealed };
    const updates = rows.map((row) => ({
      key: row.k,
      old: row.v,
      next: sealer.reseal(row.v, options.associatedData(row.k)),
    }));
    await handle.transaction(async (trx) => {
      for (const update of updates) {
        const result = await sql`
          update ${table} set ${column} = ${update.next}
          where ${key} = ${update.key} and ${column} = ${update.old}`.execute(trx);
        resealed += Number(result.numAffectedRows ?? 0n);
      }
    });
    after = rows.at(-1)?.k;
  }
}
