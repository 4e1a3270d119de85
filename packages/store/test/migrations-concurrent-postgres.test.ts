import { defineMigrations, type Migration, migrate, sql } from "@doorbell/store";
import { testEngines } from "@doorbell/store/testing";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";

const engine = testEngines().find((e) => e.dialect === "postgres");
if (engine === undefined) throw new Error("no postgres engine");

describe.skipIf(engine.skipReason !== undefined)("migrate on PostgreSQL from two processes at once", () => {
  afterAll(() => engine.cleanup());

  it("applies each migration exactly once, one process at a time", async () => {
    const { db: first, connect } = await engine.createDatabase();
    const second = await connect();
    let running = 0;
    let maxRunning = 0;
    const calls: number[] = [];
    const slow = (version: number): Migration => ({
      version,
      name: `step_${version}`,
      async up(db) {
        running++;
        maxRunning = Math.max(maxRunning, running);
        calls.push(version);
        // Hold the migration open long enough for the other process to arrive and wait.
        await sql`select pg_sleep(0.05)`.execute(db);
        await db.schema.createTable(`step_${version}`).addColumn("x", "integer").execute();
        running--;
      },
    });
    const packages = [defineMigrations("steps", [slow(1), slow(2), slow(3)])];
    const [a, b] = await Promise.all([migrate(first, packages), migrate(second, packages)]);
    expect(calls).toEqual([1, 2, 3]);
    expect(maxRunning).toBe(1);
    expect([...a.applied, ...b.applied].map((m) => m.version).sort()).toEqual([1, 2, 3]);
    expect(a.applied.length === 0 || b.applied.length === 0).toBe(true);
  });

  it("gives up with ERR_STORE_MIGRATION_LOCKED when another process holds the lock too long", async () => {
    const created = await engine.createDatabase();
    const holder = new pg.Client({ connectionString: created.url });
    await holder.connect();
    try {
      await holder.query("select pg_advisory_lock($1::int4, $2::int4)", [0x646f6f72, 0x62656c6c]);
      const error = await migrate(created.db, [], { lockTimeoutMs: 200 }).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: "ERR_STORE_MIGRATION_LOCKED" });
      // The pooled connection got its lock_timeout back: a later migrate waits normally.
      await holder.query("select pg_advisory_unlock($1::int4, $2::int4)", [0x646f6f72, 0x62656c6c]);
      const { rows } = await sql<{ lock_timeout: string }>`show lock_timeout`.execute(created.db.db);
      expect(rows[0]?.lock_timeout).toBe("0");
      await expect(migrate(created.db, [])).resolves.toEqual({ applied: [] });
    } finally {
      await holder.end();
    }
  });
});
