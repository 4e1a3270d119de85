import { openDatabase, sql } from "@doorbell/store";
import { testEngines } from "@doorbell/store/testing";
import { printComparison } from "./harness.js";

// PostgreSQL statements per second with statements prepared once per connection (the store's
// default, packages/store/src/prepared.ts) beside the same statements sent unnamed (node-postgres'
// own behaviour, DOORBELL_PG_PREPARED_STATEMENTS=off), on one database in one run. The statements
// have the shape of the delivery engine's hottest two: a lease claim (an update over a locked,
// ordered subselect) and a read over an array parameter; 4 connections run them at once.

const CONNECTIONS = 4;
const PER_ROUND = 400;
const ROUNDS = 5;

export async function benchPgStatements(): Promise<void> {
  const pgUrl = (process.env.DOORBELL_BENCH_PG_URL ?? process.env.DOORBELL_TEST_PG_URL)?.trim();
  if (!pgUrl) {
    console.log("PostgreSQL skipped: set DOORBELL_BENCH_PG_URL or DOORBELL_TEST_PG_URL to run it.");
    return;
  }
  const [, engine] = testEngines({ env: { DOORBELL_TEST_PG_URL: pgUrl }, log: () => {} });
  if (!engine) return;
  const created = await engine.createDatabase();
  try {
    await sql`create table subs (id text primary key, wake_at bigint not null, lease_owner text,
      lease_until bigint, body text not null)`.execute(created.db.db);
    await sql`insert into subs select 'sub_' || g, g, null, null, repeat('x', 200)
      from generate_series(1, 64) g`.execute(created.db.db);
    const prepared = await openDatabase({ url: created.url, maxConnections: CONNECTIONS });
    const unnamed = await openDatabase({
      url: created.url,
      maxConnections: CONNECTIONS,
      preparedStatements: false,
    });
    const pair = (db: typeof prepared) => async () => {
      const now = Date.now();
      await sql`update subs set lease_owner = ${"bench"}, lease_until = ${now}
        where id in (select id from subs where wake_at <= ${now} and (lease_until is null or lease_until <= ${0})
          order by wake_at limit ${8} for update skip locked)
        returning *`.execute(db.db);
      await sql`select s.id, s.wake_at, s.body from subs s
        where s.id = any(${["sub_1", "sub_2", "sub_3", "sub_4"]}::text[]) order by s.id`.execute(db.db);
    };
    const candidates = [
      { name: "statements prepared once per connection", run: pair(prepared), rates: [] as number[] },
      { name: "the same statements sent unnamed", run: pair(unnamed), rates: [] as number[] },
    ];
    // Interleaved rounds, so background load hits both alike; each figure is the median round.
    for (let round = 0; round <= ROUNDS; round++) {
      for (const candidate of candidates) {
        const started = performance.now();
        await Promise.all(
          Array.from({ length: CONNECTIONS }, async () => {
            for (let i = 0; i < PER_ROUND / CONNECTIONS; i++) await candidate.run();
          }),
        );
        // Round 0 warms both up (connections opened, statements named) and is not counted.
        if (round > 0) candidate.rates.push((PER_ROUND * 2) / ((performance.now() - started) / 1000));
      }
    }
    console.log(
      `Node ${process.version}; ${CONNECTIONS} connections at once, ${PER_ROUND * 2} statements a round, median of ${ROUNDS} interleaved rounds`,
    );
    const median = (rates: number[]) =>
      [...rates].sort((a, b) => a - b)[Math.floor(rates.length / 2)] as number;
    printComparison(
      "PostgreSQL statements/s, a lease claim and an array read",
      candidates.map((c) => ({ name: c.name, opsPerSecond: median(c.rates) })),
    );
    await prepared.close();
    await unnamed.close();
  } finally {
    await engine.cleanup();
  }
}
