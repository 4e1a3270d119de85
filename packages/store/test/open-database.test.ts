import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { type Kysely, openDatabase, StoreError, sql } from "@doorbell/store";
import { describe, expect, it } from "vitest";
import { forEachEngine } from "./engines.js";

interface Tables {
  note: { id: number; body: string };
}

forEachEngine((engine) => {
  const tables = () => engine.db.db as unknown as Kysely<Tables>;

  it("reports its dialect and a description without a password", () => {
    expect(engine.db.dialect).toBe(engine.dialect);
    expect(engine.db.description).not.toMatch(/:doorbell@|password/);
    if (engine.dialect === "postgres")
      expect(engine.db.description).toMatch(/^postgres:\/\/[^:]+(:\*\*\*)?@/);
  });

  it("commits a transaction that resolves and rolls back one that throws", async () => {
    await engine.db.db.schema
      .createTable("note")
      .addColumn("id", "integer", (c) => c.primaryKey())
      .addColumn("body", "text", (c) => c.notNull())
      .execute();
    const value = await engine.db.transaction(async (trx) => {
      await (trx as unknown as Kysely<Tables>).insertInto("note").values({ id: 1, body: "kept" }).execute();
      return 42;
    });
    expect(value).toBe(42);
    await expect(
      engine.db.transaction(async (trx) => {
        await (trx as unknown as Kysely<Tables>)
          .insertInto("note")
          .values({ id: 2, body: "dropped" })
          .execute();
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    const rows = await tables().selectFrom("note").selectAll().orderBy("id").execute();
    expect(rows).toEqual([{ id: 1, body: "kept" }]);
  });

  it("refuses a query on the handle inside its own transaction instead of deadlocking", async () => {
    const attempt = engine.db.transaction(async () => {
      await tables().selectFrom("note").selectAll().execute();
    });
    await expect(attempt).rejects.toMatchObject({ code: "ERR_STORE_NESTED_TRANSACTION" });
    const nested = engine.db.transaction(async () => engine.db.transaction(async () => 1));
    await expect(nested).rejects.toMatchObject({ code: "ERR_STORE_NESTED_TRANSACTION" });
    // The handle still works afterwards.
    const after = await tables().selectFrom("note").select("id").execute();
    expect(after).toEqual([{ id: 1 }]);
  });

  it("counts come back as numbers", async () => {
    const row = await tables()
      .selectFrom("note")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .executeTakeFirstOrThrow();
    expect(row.n).toBe(1);
    const raw = await sql<{ n: number }>`select count(*) as n from note`.execute(engine.db.db);
    expect(raw.rows[0]?.n).toBe(1);
  });

  it("runs transactions from many concurrent callers one at a time without losing a write", async () => {
    await engine.db.db.schema.createTable("counter").addColumn("n", "integer").execute();
    await sql`insert into counter (n) values (0)`.execute(engine.db.db);
    await Promise.all(
      Array.from({ length: 20 }, () =>
        engine.db.transaction(async (trx) => {
          // Read-modify-write: correct only if transactions serialise (SQLite BEGIN IMMEDIATE,
          // PostgreSQL row lock via FOR UPDATE).
          const forUpdate = engine.dialect === "postgres" ? sql` for update` : sql``;
          const { rows } = await sql<{ n: number }>`select n from counter${forUpdate}`.execute(trx);
          await sql`update counter set n = ${(rows[0]?.n ?? 0) + 1}`.execute(trx);
        }),
      ),
    );
    const { rows } = await sql<{ n: number }>`select n from counter`.execute(engine.db.db);
    expect(rows[0]?.n).toBe(20);
  });

  if (engine.dialect === "sqlite") {
    it("turns on WAL, foreign keys, a busy timeout and full durability, and makes the file owner-only", async () => {
      const { rows } = await sql<{ journal_mode: string }>`pragma journal_mode`.execute(engine.db.db);
      expect(rows[0]?.journal_mode).toBe("wal");
      const fk = await sql<{ foreign_keys: number }>`pragma foreign_keys`.execute(engine.db.db);
      expect(fk.rows[0]?.foreign_keys).toBe(1);
      const busy = await sql<{ timeout: number }>`pragma busy_timeout`.execute(engine.db.db);
      expect(busy.rows[0]?.timeout).toBe(5000);
      // NORMAL for SQLite itself: the store syncs the WAL after each commit off the event loop
      // (sqlite-durable-commit.test.ts), which together is what FULL guarantees.
      const sync = await sql<{ synchronous: number }>`pragma synchronous`.execute(engine.db.db);
      expect(sync.rows[0]?.synchronous).toBe(1);
      expect(fs.statSync(engine.url).mode & 0o777).toBe(0o600);
    });
  }

  it("close() is idempotent", async () => {
    const other = await engine.connect();
    await other.close();
    await other.close();
  });
});

describe("openDatabase on SQLite", () => {
  it("opens :memory: and sqlite: URLs", async () => {
    const memory = await openDatabase(":memory:");
    expect(memory.dialect).toBe("sqlite");
    const { rows } = await sql<{ one: number }>`select 1 as one`.execute(memory.db);
    expect(rows).toEqual([{ one: 1 }]);
    await memory.close();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-store-url-"));
    try {
      const file = path.join(dir, "nested", "db.sqlite");
      const viaUrl = await openDatabase(`sqlite:${file}`);
      expect(viaUrl.description).toBe(`sqlite:${file}`);
      await viaUrl.close();
      expect(fs.existsSync(file)).toBe(true);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("rejects an unsupported URL scheme with ERR_STORE_CONFIG", async () => {
    await expect(openDatabase("mysql://user:hunter2@localhost/db")).rejects.toSatisfy(
      (error: unknown) =>
        error instanceof StoreError &&
        error.code === "ERR_STORE_CONFIG" &&
        !error.message.includes("hunter2"),
    );
  });
});

describe("openDatabase on PostgreSQL", () => {
  it("fails with ERR_STORE_CONNECT and never echoes the password", async () => {
    const url = "postgres://nobody:canary-pass-8c1f@127.0.0.1:1/none";
    const error = await openDatabase({ url, connectTimeoutMs: 2000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).code).toBe("ERR_STORE_CONNECT");
    expect((error as StoreError).message).not.toContain("canary-pass-8c1f");
    expect((error as StoreError).message).toContain("nobody:***@127.0.0.1:1/none");
  });
});
