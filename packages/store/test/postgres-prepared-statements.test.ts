import { type Kysely, sql } from "@doorbell/store";
import { testEngines } from "@doorbell/store/testing";
import { afterAll, describe, expect, it } from "vitest";

/**
 * PostgreSQL statements a process runs again and again are prepared once per connection (the
 * server then only binds and executes them), read from the server's own pg_prepared_statements;
 * transaction control and DDL never are; a statement whose cached plan a migration broke runs
 * unprepared from then on; and the option turns it all off.
 */
const engine = testEngines().find((e) => e.dialect === "postgres");
if (engine === undefined) throw new Error("no postgres engine");

interface Tables {
  note: { id: number; body: string };
}

/** The prepared statements of the connection `run` is given (one transaction pins one connection). */
const preparedOn = async (db: Kysely<Tables>, run: (trx: Kysely<Tables>) => Promise<void>) =>
  db.transaction().execute(async (trx) => {
    await run(trx);
    const { rows } = await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(
      trx,
    );
    return rows.map((row) => row.statement.replace(/\s+/g, " ").trim());
  });

describe.skipIf(engine.skipReason !== undefined)("prepared statements on PostgreSQL", () => {
  afterAll(() => engine.cleanup());

  it("prepares a statement from its second run, on the connection that runs it, and answers the same", async () => {
    const { db: store } = await engine.createDatabase({ maxConnections: 1 });
    const db = store.db as unknown as Kysely<Tables>;
    await db.schema.createTable("note").addColumn("id", "integer").addColumn("body", "text").execute();
    await db
      .insertInto("note")
      .values([
        { id: 1, body: "one" },
        { id: 2, body: "two" },
      ])
      .execute();
    const read = (trx: Kysely<Tables>, id: number) =>
      trx.selectFrom("note").select(["id", "body"]).where("id", "=", id).executeTakeFirst();

    const answers: unknown[] = [];
    const prepared = await preparedOn(db, async (trx) => {
      answers.push(await read(trx, 1), await read(trx, 2), await read(trx, 1));
    });
    expect(answers).toEqual([
      { id: 1, body: "one" },
      { id: 2, body: "two" },
      { id: 1, body: "one" },
    ]);
    expect(prepared).toContain('select "id", "body" from "note" where "id" = $1');
    // The insert and the DDL ran once; BEGIN and the catalogue read are not plain statements to keep.
    expect(prepared.some((text) => /^(begin|create|insert)/i.test(text))).toBe(false);
  });

  it("runs a statement unprepared, without failing, after a migration changed what its cached plan returns", async () => {
    const { db: store } = await engine.createDatabase({ maxConnections: 1 });
    const db = store.db as unknown as Kysely<Tables>;
    await db.schema.createTable("note").addColumn("id", "integer").execute();
    await sql`insert into note (id) values (1)`.execute(db);
    const everything = () => sql<Record<string, unknown>>`select * from note where id = ${1}`.execute(db);
    await everything();
    await everything(); // now prepared on the pool's one connection
    await sql`alter table note add column body text default 'added'`.execute(db);

    // PostgreSQL refuses the cached plan (0A000); outside a transaction the call is run again unnamed.
    const { rows } = await everything();
    expect(rows).toEqual([{ id: 1, body: "added" }]);
    const { rows: again } = await everything();
    expect(again).toEqual([{ id: 1, body: "added" }]);
  });

  it("inside a transaction, fails that transaction once (as PostgreSQL does) and runs unprepared after", async () => {
    const { db: store } = await engine.createDatabase({ maxConnections: 1 });
    const db = store.db as unknown as Kysely<Tables>;
    await db.schema.createTable("note").addColumn("id", "integer").execute();
    await sql`insert into note (id) values (1)`.execute(db);
    const everything = (on: Kysely<Tables>) =>
      sql<Record<string, unknown>>`select * from note where id = ${1}`.execute(on);
    await everything(db);
    await everything(db);
    await sql`alter table note add column body text default 'added'`.execute(db);

    const failed = await db
      .transaction()
      .execute((trx) => everything(trx))
      .then(
        () => undefined,
        (error: unknown) => error as { code?: string },
      );
    expect(failed?.code).toBe("0A000");
    const { rows } = await db.transaction().execute((trx) => everything(trx));
    expect(rows).toEqual([{ id: 1, body: "added" }]);
  });

  it("prepares nothing when preparedStatements is false", async () => {
    const created = await engine.createDatabase();
    const plain = await created.connect({ maxConnections: 1, preparedStatements: false });
    const db = plain.db as unknown as Kysely<Tables>;
    await db.schema.createTable("note").addColumn("id", "integer").execute();
    const prepared = await preparedOn(db, async (trx) => {
      for (let i = 0; i < 3; i++) await trx.selectFrom("note").select("id").where("id", "=", i).execute();
    });
    expect(prepared).toEqual([]);
  });
});
