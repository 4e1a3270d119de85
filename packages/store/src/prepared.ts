import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from "kysely";
import type pg from "pg";

/**
 * PostgreSQL statements prepared once per connection. node-postgres sends every query unnamed,
 * so the server parses and plans it again on each call; for the few statements a process runs
 * thousands of times (the delivery engine's claims, head reads, releases and deletes, the holder's
 * match reads) that was a large share of the database's CPU. A statement text seen a second time
 * gets a name, and from then on each pooled connection parses it once and only binds and executes.
 *
 * Bounded: at most MAX_NAMED names are ever given per process (each statement is held by every
 * connection on the server), and only MAX_COUNTED texts are counted, so texts that vary (an IN
 * list of any length) cannot grow any map without end. Statements that are not plain reads or writes (transaction
 * control, DDL, LISTEN, SET) always go unnamed.
 *
 * A named statement can stop fitting the tables: another process's migration may change what
 * `select *` returns, and PostgreSQL then refuses the cached plan ("cached plan must not change
 * result type"). The text is then never named again in this process: outside a transaction the
 * call is simply run again unnamed; inside one it fails (the transaction is aborted) and the
 * caller's next attempt is parsed afresh.
 */
const MAX_NAMED = 256;
const MAX_COUNTED = 4_096;
const PLAIN_STATEMENT = /^\s*(?:select|insert|update|delete|with)\b/i;
const BEGIN = /^\s*(?:begin|start\s+transaction)\b/i;
const END = /^\s*(?:commit|rollback|end|abort)\b/i;
const CACHED_PLAN_CHANGED = "0A000";
const NO_SUCH_STATEMENT = "26000";

interface PreparedNames {
  /** Names given so far: a refused text's name is never given to another text. */
  given: number;
  readonly named: Map<string, string>;
  readonly seen: Map<string, number>;
  readonly refused: Set<string>;
}

/** The name for `text` if it has earned one (counted as a use). */
const nameFor = (names: PreparedNames, text: string): string | undefined => {
  const named = names.named.get(text);
  if (named !== undefined) return named;
  if (names.given >= MAX_NAMED || names.refused.has(text) || !PLAIN_STATEMENT.test(text)) return;
  const count = names.seen.get(text);
  if (count === undefined) {
    if (names.seen.size < MAX_COUNTED) names.seen.set(text, 1);
    return;
  }
  names.seen.delete(text);
  const name = `doorbell_${names.given++}`;
  names.named.set(text, name);
  return name;
};

type QueryResult = PostgresQueryResult<unknown>;

/** A pg.Pool for Kysely's PostgresDialect whose connections prepare the statements run often. */
export const preparingPool = (pool: pg.Pool): PostgresPool => {
  const names: PreparedNames = { given: 0, named: new Map(), seen: new Map(), refused: new Set() };
  // Kysely keys its connection objects by client, so each pooled client keeps one wrapper.
  const wrappers = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  // The client Kysely is given: `query(text, values)` runs named once a text has earned a name.
  const wrap = (client: pg.PoolClient): PostgresPoolClient => {
    // Whether the connection is inside a transaction (Kysely sends BEGIN and COMMIT through here).
    let inTransaction = false;
    const query = async (text: string, values: readonly unknown[]): Promise<QueryResult> => {
      const name = nameFor(names, text);
      if (name === undefined) {
        if (BEGIN.test(text)) inTransaction = true;
        else if (END.test(text)) inTransaction = false;
        return (await client.query(text, values as unknown[])) as QueryResult;
      }
      try {
        return (await client.query({ name, text, values: values as unknown[] })) as QueryResult;
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        if (code !== CACHED_PLAN_CHANGED && code !== NO_SUCH_STATEMENT) throw error;
        names.named.delete(text);
        names.refused.add(text);
        // Outside a transaction nothing was done: the statement is run again, parsed afresh.
        // Inside one the transaction is aborted, and the caller sees the error as for any other.
        if (inTransaction) throw error;
        return (await client.query(text, values as unknown[])) as QueryResult;
      }
    };
    const wrapper: PostgresPoolClient = {
      query: ((textOrCursor: string | PostgresCursor<unknown>, values?: readonly unknown[]) =>
        typeof textOrCursor === "string"
          ? query(textOrCursor, values ?? [])
          : client.query(textOrCursor as unknown as pg.Submittable)) as PostgresPoolClient["query"],
      release: (destroy?: boolean) => client.release(destroy),
    };
    return wrapper;
  };
  return {
    async connect(): Promise<PostgresPoolClient> {
      const client = await pool.connect();
      let wrapper = wrappers.get(client);
      if (wrapper === undefined) {
        wrapper = wrap(client);
        wrappers.set(client, wrapper);
      }
      return wrapper;
    },
    end: () => pool.end(),
  };
};
