import {
  constraintViolation,
  defineMigrations,
  type Generated,
  type Kysely,
  migrate,
  sql,
} from "@doorbell/store";
import { beforeAll, expect, it } from "vitest";
import { forEachEngine } from "./engines.js";

interface Row {
  id: Generated<number>;
  at: number;
  small: number;
  big: number | bigint;
  flag: number;
  label: string;
  data: Buffer | null;
  ratio: number | null;
  doc: string | null;
}
interface Tables {
  sample: Row;
  child: { parent_id: number };
}

const schema = defineMigrations("types", [
  {
    version: 1,
    name: "create_sample",
    async up(db, ctx) {
      await db.schema
        .createTable("sample")
        .$call(ctx.autoId("id"))
        .addColumn("at", ctx.types.timestamp, (c) => c.notNull())
        .addColumn("small", ctx.types.integer, (c) => c.notNull())
        .addColumn("big", ctx.types.bigint, (c) => c.notNull())
        .addColumn("flag", ctx.types.boolean, (c) => c.notNull().check(sql`flag in (0, 1)`))
        .addColumn("label", ctx.types.text, (c) => c.notNull().unique())
        .addColumn("data", ctx.types.binary)
        .addColumn("ratio", ctx.types.real)
        .addColumn("doc", ctx.types.json)
        .execute();
      await db.schema
        .createTable("child")
        .addColumn("parent_id", ctx.types.bigint, (c) => c.notNull().references("sample.id"))
        .execute();
    },
  },
]);

const allBytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
const rows: Omit<Row, "id">[] = [
  {
    at: 1_700_000_000_123,
    small: 2_147_483_647,
    big: Number.MAX_SAFE_INTEGER,
    flag: 1,
    label: "héllo — 🛎️ 中文 'quoted' \"double\" \\ back",
    data: allBytes,
    ratio: 0.1,
    doc: JSON.stringify({ a: [1, 2, { b: null }], c: "ü" }),
  },
  {
    at: 0,
    small: -2_147_483_648,
    big: Number.MIN_SAFE_INTEGER,
    flag: 0,
    label: "",
    data: Buffer.alloc(0),
    ratio: -1.5e300,
    doc: null,
  },
  { at: -1, small: 0, big: 0, flag: 0, label: "x".repeat(100_000), data: null, ratio: null, doc: "[]" },
  {
    at: 1,
    small: 1,
    big: 1,
    flag: 1,
    label: "inf",
    data: Buffer.from([0]),
    ratio: Number.POSITIVE_INFINITY,
    doc: "{}",
  },
];

forEachEngine((engine) => {
  const db = () => engine.db.db as unknown as Kysely<Tables>;
  beforeAll(async () => {
    await migrate(engine.db, [schema]);
  });

  it("reads back every column type exactly as written", async () => {
    await db().insertInto("sample").values(rows).execute();
    const read = await db().selectFrom("sample").selectAll().orderBy("id").execute();
    expect(read).toEqual(rows.map((row, index) => ({ id: index + 1, ...row })));
    for (const row of read) {
      expect(typeof row.at).toBe("number");
      expect(typeof row.big).toBe("number");
      if (row.data !== null) expect(Buffer.isBuffer(row.data)).toBe(true);
    }
  });

  it("never reuses an auto id after the highest row is deleted", async () => {
    await db().deleteFrom("sample").where("id", "=", 4).execute();
    const inserted = await db()
      .insertInto("sample")
      .values({ at: 2, small: 2, big: 2, flag: 0, label: "next" })
      .returning("id")
      .executeTakeFirstOrThrow();
    expect(inserted.id).toBe(5);
  });

  it("refuses to read an integer that a JavaScript number cannot hold exactly", async () => {
    await db()
      .insertInto("sample")
      .values({ at: 3, small: 3, big: 2n ** 60n, flag: 0, label: "huge" })
      .execute();
    await expect(
      db().selectFrom("sample").select("big").where("label", "=", "huge").execute(),
    ).rejects.toMatchObject({ code: "ERR_STORE_INTEGER_OVERFLOW" });
    await db().deleteFrom("sample").where("label", "=", "huge").execute();
  });

  it("names broken constraints the same on both engines", async () => {
    const violation = async (write: () => Promise<unknown>) =>
      constraintViolation(await write().catch((e) => e));
    expect(
      await violation(() =>
        db().insertInto("sample").values({ at: 1, small: 1, big: 1, flag: 0, label: "next" }).execute(),
      ),
    ).toBe("unique");
    expect(await violation(() => db().insertInto("child").values({ parent_id: 999 }).execute())).toBe(
      "foreign_key",
    );
    expect(
      await violation(() =>
        db().insertInto("sample").values({ at: 1, small: 1, big: 1, flag: 2, label: "bad-flag" }).execute(),
      ),
    ).toBe("check");
    expect(
      await violation(() =>
        sql`insert into sample (at, small, big, flag) values (1, 1, 1, 0)`.execute(engine.db.db),
      ),
    ).toBe("not_null");
    expect(constraintViolation(new Error("other"))).toBeUndefined();
  });
});
