// The one place a handle, a Kysely instance or a transaction is told which tables it holds.
//
// A handle is opened without knowing the tables: each package migrates its own and describes them
// in its own `Tables` type, and one database holds the tables of several packages. Kysely's types
// are invariant in the table map (it appears in both argument and result positions), so moving a
// handle from one package's view to another's needs a cast; it lives here, once, instead of in
// every package. The tables must exist (their migrations ran): this checks nothing at run time.
import type { Kysely, Transaction } from "kysely";
import type { Database } from "./handle.js";

// biome-ignore lint/suspicious/noExplicitAny: any table map narrows to any other
type AnyTables = any;

/** The same transaction, typed as holding `T`'s tables. */
export function asTables<T>(trx: Transaction<AnyTables>): Transaction<T>;
/** The same Kysely instance, typed as holding `T`'s tables. */
export function asTables<T>(db: Kysely<AnyTables>): Kysely<T>;
/** The same handle, typed as holding `T`'s tables. */
export function asTables<T>(handle: Database<AnyTables>): Database<T>;
export function asTables<T>(
  value: Transaction<AnyTables> | Kysely<AnyTables> | Database<AnyTables>,
): Transaction<T> | Kysely<T> | Database<T> {
  return value;
}
