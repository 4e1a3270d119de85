import { createSealer, defineMigrations, Keyring, type Kysely, migrate, resealColumn } from "@doorbell/store";
import { expect, it } from "vitest";
import { forEachEngine, testKey } from "./engines.js";

interface Tables {
  secret: { id: number; sealed: string | null };
}

const schema = defineMigrations("reseal", [
  {
    version: 1,
    name: "create_secret",
    up: (db, ctx) =>
      db.schema
        .createTable("secret")
        .addColumn("id", ctx.types.integer, (c) => c.primaryKey())
        .addColumn("sealed", ctx.types.text)
        .execute(),
  },
]);

const old = createSealer(new Keyring([{ id: "old", key: testKey(1) }]));
const rotated = createSealer(
  new Keyring([
    { id: "new", key: testKey(2) },
    { id: "old", key: testKey(1) },
  ]),
);
const ad = (id: string | number) => `test.secret:${id}`;

forEachEngine((engine) => {
  it("reseals every old-key value under the current key in batches, and is a no-op the second time", async () => {
    const { db } = await engine.createDatabase();
    await migrate(db, [schema]);
    const tables = db.db as unknown as Kysely<Tables>;
    const values = Array.from({ length: 250 }, (_, i) => ({
      id: i + 1,
      sealed:
        i % 10 === 9
          ? null
          : i % 3 === 0
            ? rotated.seal(`v${i + 1}`, ad(i + 1))
            : old.seal(`v${i + 1}`, ad(i + 1)),
    }));
    await tables.insertInto("secret").values(values).execute();
    const stale = values.filter((v) => v.sealed !== null && rotated.needsReseal(v.sealed)).length;
    expect(stale).toBeGreaterThan(100);

    const first = await resealColumn(db, rotated, {
      table: "secret",
      keyColumn: "id",
      column: "sealed",
      associatedData: ad,
      batchSize: 40,
    });
    expect(first.resealed).toBe(stale);
    const rows = await tables.selectFrom("secret").selectAll().orderBy("id").execute();
    for (const row of rows) {
      if (row.sealed === null) continue;
      expect(rotated.keyIdOf(row.sealed)).toBe("new");
      expect(rotated.openText(row.sealed, ad(row.id))).toBe(`v${row.id}`);
    }
    const second = await resealColumn(db, rotated, {
      table: "secret",
      keyColumn: "id",
      column: "sealed",
      associatedData: ad,
    });
    expect(second.resealed).toBe(0);
  });

  it("stops at a value that fails to open, keeping the batches already done", async () => {
    const { db } = await engine.createDatabase();
    await migrate(db, [schema]);
    const tables = db.db as unknown as Kysely<Tables>;
    await tables
      .insertInto("secret")
      .values([
        { id: 1, sealed: old.seal("a", ad(1)) },
        { id: 2, sealed: old.seal("moved from row 1", ad(1)) },
      ])
      .execute();
    const run = resealColumn(db, rotated, {
      table: "secret",
      keyColumn: "id",
      column: "sealed",
      associatedData: ad,
      batchSize: 1,
    });
    await expect(run).rejects.toMatchObject({ code: "ERR_STORE_UNSEAL_FAILED" });
    const rows = await tables.selectFrom("secret").selectAll().orderBy("id").execute();
    expect(rotated.keyIdOf(rows[0]?.sealed as string)).toBe("new");
    expect(rotated.keyIdOf(rows[1]?.sealed as string)).toBe("old");
  });

  it("refuses identifiers that are not plain names", async () => {
    await expect(
      resealColumn(engine.db, rotated, {
        table: "secret; drop table x",
        keyColumn: "id",
        column: "sealed",
        associatedData: ad,
      }),
    ).rejects.toMatchObject({ code: "ERR_STORE_CONFIG" });
  });
});
