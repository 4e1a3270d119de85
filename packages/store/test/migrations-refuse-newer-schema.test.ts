import { appliedMigrations, defineMigrations, type Migration, migrate } from "@doorbell/store";
import { expect, it } from "vitest";
import { forEachEngine } from "./engines.js";

const table = (version: number, name: string): Migration => ({
  version,
  name,
  up: (db) => db.schema.createTable(name).addColumn("x", "integer").execute(),
});

forEachEngine((engine) => {
  it("refuses to start when the database has a newer version than the code knows", async () => {
    const { db } = await engine.createDatabase();
    await migrate(db, [defineMigrations("notes", [table(1, "t1"), table(2, "t2"), table(3, "t3")])]);
    const old = [defineMigrations("notes", [table(1, "t1"), table(2, "t2")])];
    const error = await migrate(db, old).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "ERR_STORE_SCHEMA_TOO_NEW" });
    expect((error as Error).message).toContain("notes schema version 3");
    expect((error as Error).message).toContain("up to 2");
    expect((await appliedMigrations(db)).map((m) => m.version)).toEqual([1, 2, 3]);
  });

  it("checks every package before changing any", async () => {
    const { db } = await engine.createDatabase();
    await migrate(db, [defineMigrations("tags", [table(1, "a1"), table(2, "a2")])]);
    const error = await migrate(db, [
      defineMigrations("notes", [table(1, "n1")]),
      defineMigrations("tags", [table(1, "a1")]),
    ]).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "ERR_STORE_SCHEMA_TOO_NEW" });
    // "notes" came first in the list but was not applied.
    expect((await appliedMigrations(db)).map((m) => m.package)).toEqual(["tags", "tags"]);
  });

  it("refuses when a recorded version has another name than the code's", async () => {
    const { db } = await engine.createDatabase();
    await migrate(db, [defineMigrations("notes", [table(1, "t1")])]);
    const error = await migrate(db, [defineMigrations("notes", [table(1, "renamed")])]).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: "ERR_STORE_MIGRATION_MISMATCH" });
  });
});
