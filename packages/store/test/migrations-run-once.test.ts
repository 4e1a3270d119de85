import {
  appliedMigrations,
  defineMigrations,
  type Generated,
  type Kysely,
  type Migration,
  migrate,
  type PackageMigrations,
  sql,
} from "@doorbell/store";
import { describe, expect, it } from "vitest";
import { forEachEngine } from "./engines.js";

const notesV1: Migration = {
  version: 1,
  name: "create_note",
  async up(db, ctx) {
    await db.schema
      .createTable("note")
      .$call(ctx.autoId("id"))
      .addColumn("body", ctx.types.text, (c) => c.notNull())
      .addColumn("created_at", ctx.types.timestamp, (c) => c.notNull())
      .execute();
  },
};
const notesV2: Migration = {
  version: 2,
  name: "add_note_pinned",
  async up(db, ctx) {
    await db.schema
      .alterTable("note")
      .addColumn("pinned", ctx.types.boolean, (c) => c.notNull().defaultTo(0))
      .execute();
  },
};
const tagsV1: Migration = {
  version: 1,
  name: "create_tag",
  async up(db, ctx) {
    await db.schema
      .createTable("tag")
      .addColumn("note_id", ctx.types.bigint, (c) => c.notNull().references("note.id"))
      .addColumn("label", ctx.types.text, (c) => c.notNull())
      .execute();
  },
};

const clock = (start: number) => {
  let now = start;
  return () => now++;
};

forEachEngine((engine) => {
  it("applies pending migrations in order, records them, and does nothing the second time", async () => {
    const { db } = await engine.createDatabase();
    const packages = [defineMigrations("notes", [notesV1, notesV2]), defineMigrations("tags", [tagsV1])];
    const first = await migrate(db, packages, { now: clock(1_700_000_000_000) });
    expect(first.applied).toEqual([
      { package: "notes", version: 1, name: "create_note" },
      { package: "notes", version: 2, name: "add_note_pinned" },
      { package: "tags", version: 1, name: "create_tag" },
    ]);
    const second = await migrate(db, packages, { now: clock(1_800_000_000_000) });
    expect(second.applied).toEqual([]);
    expect(await appliedMigrations(db)).toEqual([
      { package: "notes", version: 1, name: "create_note", appliedAt: 1_700_000_000_000 },
      { package: "notes", version: 2, name: "add_note_pinned", appliedAt: 1_700_000_000_001 },
      { package: "tags", version: 1, name: "create_tag", appliedAt: 1_700_000_000_002 },
    ]);
    // The tables exist with the columns the migrations made.
    const notes = db.db as unknown as Kysely<{
      note: { id: Generated<number>; body: string; created_at: number; pinned: Generated<number> };
    }>;
    await notes.insertInto("note").values({ body: "hi", created_at: 5 }).execute();
    expect(await notes.selectFrom("note").selectAll().execute()).toEqual([
      { id: 1, body: "hi", created_at: 5, pinned: 0 },
    ]);
  });

  it("applies only the versions added since the last start", async () => {
    const { db } = await engine.createDatabase();
    await migrate(db, [defineMigrations("notes", [notesV1])]);
    const later = await migrate(db, [defineMigrations("notes", [notesV1, notesV2])]);
    expect(later.applied).toEqual([{ package: "notes", version: 2, name: "add_note_pinned" }]);
  });

  it("ignores recorded packages the caller did not list", async () => {
    const { db } = await engine.createDatabase();
    await migrate(db, [defineMigrations("notes", [notesV1]), defineMigrations("tags", [tagsV1])]);
    const report = await migrate(db, [defineMigrations("notes", [notesV1])]);
    expect(report.applied).toEqual([]);
  });

  it("rolls back a failing migration with its record and reports ERR_STORE_MIGRATION_FAILED", async () => {
    const { db } = await engine.createDatabase();
    const broken: Migration = {
      version: 2,
      name: "half_done",
      async up(trx) {
        await trx.schema.createTable("half").addColumn("x", "integer").execute();
        await sql`select * from no_such_table`.execute(trx);
      },
    };
    const error = await migrate(db, [defineMigrations("notes", [notesV1, broken])]).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "ERR_STORE_MIGRATION_FAILED" });
    expect((error as Error).message).toContain('notes#2 "half_done"');
    // Version 1 stays applied; version 2 left nothing behind.
    expect((await appliedMigrations(db)).map((m) => m.version)).toEqual([1]);
    const tables = await db.db.introspection.getTables();
    expect(tables.map((t) => t.name)).not.toContain("half");
    // Fixed code then applies it.
    const fixed: Migration = {
      ...broken,
      up: (trx) => trx.schema.createTable("half").addColumn("x", "integer").execute(),
    };
    const report = await migrate(db, [defineMigrations("notes", [notesV1, fixed])]);
    expect(report.applied).toEqual([{ package: "notes", version: 2, name: "half_done" }]);
  });
});

describe("migration lists", () => {
  const up = async () => {};
  const cases: [string, () => PackageMigrations][] = [
    ["a bad package name", () => defineMigrations("Notes!", [])],
    ["versions starting above 1", () => defineMigrations("notes", [{ version: 2, name: "x", up }])],
    [
      "a gap in versions",
      () =>
        defineMigrations("notes", [
          { version: 1, name: "a", up },
          { version: 3, name: "b", up },
        ]),
    ],
    [
      "versions out of order",
      () =>
        defineMigrations("notes", [
          { version: 2, name: "a", up },
          { version: 1, name: "b", up },
        ]),
    ],
    [
      "a name that is not snake_case",
      () => defineMigrations("notes", [{ version: 1, name: "Create Note", up }]),
    ],
  ];
  for (const [what, make] of cases) {
    it(`refuses ${what} with ERR_STORE_MIGRATION_INVALID`, () => {
      expect(make).toThrow(expect.objectContaining({ code: "ERR_STORE_MIGRATION_INVALID" }));
    });
  }
});
