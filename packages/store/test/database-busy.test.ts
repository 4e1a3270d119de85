import { isDatabaseBusy, type Kysely } from "@doorbell/store";
import { holdTransaction } from "@doorbell/store/testing";
import { expect, it } from "vitest";
import { forEachEngine } from "./engines.js";

/**
 * `isDatabaseBusy` on the errors the real drivers give when the database is saturated for a moment
 * (SQLite: the write lock held past the busy timeout; PostgreSQL: no pooled connection free within
 * the pool's wait), and not on a fault: a broken constraint or any other error.
 */
interface Tables {
  busy_note: { id: number };
}

forEachEngine((engine) => {
  it("says busy for a saturated database, and not for a fault", async () => {
    const db = () => engine.db.db as unknown as Kysely<Tables>;
    await db()
      .schema.createTable("busy_note")
      .addColumn("id", "integer", (c) => c.primaryKey())
      .execute();
    await db().insertInto("busy_note").values({ id: 1 }).execute();

    // One writer holds the database (SQLite: the write lock; PostgreSQL: the pool's only connection).
    const second = await engine.connect(
      engine.dialect === "sqlite" ? { busyTimeoutMs: 50 } : { maxConnections: 1, connectTimeoutMs: 200 },
    );
    const hold = await holdTransaction(engine.dialect === "sqlite" ? engine.db : second, (trx) =>
      (trx as unknown as Kysely<Tables>).insertInto("busy_note").values({ id: 2 }).execute(),
    );
    const error = await (second.db as unknown as Kysely<Tables>)
      .insertInto("busy_note")
      .values({ id: 3 })
      .execute()
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    await hold.release();
    expect(error).toBeInstanceOf(Error);
    expect(isDatabaseBusy(error)).toBe(true);
    expect(isDatabaseBusy(new Error("wrapped", { cause: error }))).toBe(true);

    const duplicate = await db()
      .insertInto("busy_note")
      .values({ id: 1 })
      .execute()
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(isDatabaseBusy(duplicate)).toBe(false);
    expect(isDatabaseBusy(new Error("timeout"))).toBe(false);
    expect(isDatabaseBusy(undefined)).toBe(false);
    await second.close();
  });
});
