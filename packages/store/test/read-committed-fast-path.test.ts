// `Database.read(compiled)`: the hot-path read. It returns the same rows as `db.executeQuery`
// (integers narrowed to numbers, too-large ones refused), reads committed data only (never a row
// of a transaction still open, even one that later rolls back), refuses a statement that returns
// no rows, and inside a transaction of the same handle fails like any query on the handle.
// `readArrays` does the same with each row as an array of its columns, in the order selected.
import { type Kysely, StoreError, sql } from "@doorbell/store";
import { beforeAll, expect, it } from "vitest";
import { forEachEngine } from "./engines.js";

interface Tables {
  reading: { id: number; amount: number; body: string };
}

forEachEngine((engine) => {
  const tables = () => engine.db.db as unknown as Kysely<Tables>;
  const count = () =>
    tables()
      .selectFrom("reading")
      .select((eb) => eb.fn.countAll().as("n"))
      .compile();

  beforeAll(async () => {
    await tables()
      .schema.createTable("reading")
      .addColumn("id", "integer", (c) => c.primaryKey())
      .addColumn("amount", "bigint", (c) => c.notNull())
      .addColumn("body", "text", (c) => c.notNull())
      .execute();
    await tables()
      .insertInto("reading")
      .values({ id: 1, amount: 9_007_199_254_740_991, body: "max" })
      .execute();
  });

  it("returns the rows executeQuery returns, with integers as numbers", async () => {
    const query = tables().selectFrom("reading").selectAll().where("id", "=", 1).compile();
    const fast = await engine.db.read(query);
    expect(fast).toEqual((await tables().executeQuery(query)).rows);
    expect(fast).toEqual([{ id: 1, amount: 9_007_199_254_740_991, body: "max" }]);
  });

  it("readArrays returns the same rows as arrays of their columns, in the order selected", async () => {
    const query = tables()
      .selectFrom("reading")
      .select(["body", "amount", "id"])
      .where("id", "=", 1)
      .compile();
    expect(await engine.db.readArrays(query)).toEqual([["max", 9_007_199_254_740_991, 1]]);
    // The statement is shared: a read of the same query right after still gets objects.
    expect(await engine.db.read(query)).toEqual([{ body: "max", amount: 9_007_199_254_740_991, id: 1 }]);
  });

  it("refuses an integer beyond what a JavaScript number holds", async () => {
    const query = sql<{ big: number }>`select 9007199254740993 as big`.compile(engine.db.db);
    await expect(engine.db.read(query)).rejects.toMatchObject({ code: "ERR_STORE_INTEGER_OVERFLOW" });
    await expect(engine.db.readArrays(query)).rejects.toMatchObject({ code: "ERR_STORE_INTEGER_OVERFLOW" });
  });

  it("never sees a row of a transaction that is still open, and none after it rolled back", async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let inserted: () => void = () => {};
    const insertedNow = new Promise<void>((resolve) => {
      inserted = resolve;
    });
    const transaction = engine.db
      .transaction(async (trx) => {
        await (trx as unknown as Kysely<Tables>)
          .insertInto("reading")
          .values({ id: 2, amount: 1, body: "open" })
          .execute();
        inserted();
        await held;
        throw new Error("rolled back on purpose");
      })
      .catch((error: Error) => error.message);
    await insertedNow;
    const during = engine.db.read(count());
    const duringArrays = engine.db.readArrays(count());
    release();
    expect(await transaction).toBe("rolled back on purpose");
    expect(Number((await during)[0]?.n)).toBe(1);
    expect(Number((await duringArrays)[0]?.[0])).toBe(1);
  });

  it("refuses a statement that returns no rows", async () => {
    if (engine.dialect !== "sqlite") return; // PostgreSQL answers an empty row list for it
    const query = tables().updateTable("reading").set({ body: "x" }).where("id", "=", 99).compile();
    await expect(engine.db.read(query)).rejects.toThrow(/returns rows/);
  });

  it("inside a transaction of the same handle, fails like any query on the handle", async () => {
    await expect(engine.db.transaction(() => engine.db.read(count()))).rejects.toBeInstanceOf(StoreError);
    await expect(engine.db.transaction(() => engine.db.readArrays(count()))).rejects.toBeInstanceOf(
      StoreError,
    );
  });
});
