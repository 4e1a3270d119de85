import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import {
  constraintViolation,
  createCodeHasher,
  createSealer,
  defineMigrations,
  Keyring,
  type Kysely,
  migrate,
  parseKeyring,
  sql,
} from "@doorbell/store";
import { expect, it } from "vitest";
import { forEachEngine } from "./engines.js";

interface Tables {
  endpoint: { id: number; url: string; secret_sealed: string; code_hash: string };
}

const schema = defineMigrations("canary", [
  {
    version: 1,
    name: "create_endpoint",
    async up(db, ctx) {
      await db.schema
        .createTable("endpoint")
        .addColumn("id", ctx.types.integer, (c) => c.primaryKey())
        .addColumn("url", ctx.types.text, (c) => c.notNull())
        .addColumn("secret_sealed", ctx.types.text, (c) => c.notNull())
        .addColumn("code_hash", ctx.types.text, (c) => c.notNull().unique())
        .execute();
    },
  },
]);

/**
 * pg_dump of the table's data, or undefined when the PostgreSQL client tools are not installed or
 * are older than the server (the system's pg_dump against the embedded PostgreSQL of `npm test`).
 */
function pgDump(url: string): string | undefined {
  try {
    return execFileSync("pg_dump", ["--data-only", "--table=endpoint", url], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    if (/server version mismatch/.test(String((error as { stderr?: unknown }).stderr))) return undefined;
    throw error;
  }
}

forEachEngine((engine) => {
  it("never writes a sealed secret or a hashed code in clear, nor puts one in an error", async () => {
    const master = randomBytes(32);
    const keyring = new Keyring([{ id: "k1", key: master }]);
    const sealer = createSealer(keyring);
    const codes = createCodeHasher(keyring, "intent-code");
    const secret = `CANARY-SECRET-${randomBytes(8).toString("hex")}`;
    const code = `CANARY-CODE-${randomBytes(8).toString("hex")}`;
    // Written in clear on purpose, so the scan below is shown to find what is there.
    const marker = `VISIBLE-MARKER-${randomBytes(8).toString("hex")}`;

    const { db, url } = await engine.createDatabase();
    await migrate(db, [schema]);
    const tables = db.db as unknown as Kysely<Tables>;
    await tables
      .insertInto("endpoint")
      .values({
        id: 1,
        url: marker,
        secret_sealed: sealer.seal(secret, "endpoint.secret:1"),
        code_hash: codes.hash(code),
      })
      .execute();
    const row = await tables.selectFrom("endpoint").selectAll().executeTakeFirstOrThrow();
    expect(sealer.openText(row.secret_sealed, "endpoint.secret:1")).toBe(secret);
    expect(codes.verify(code, row.code_hash)).toBe(true);
    const found = await tables
      .selectFrom("endpoint")
      .select("id")
      .where("code_hash", "in", codes.lookupHashes(code))
      .execute();
    expect(found).toEqual([{ id: 1 }]);

    // Provoke every error a caller could surface, and keep what it would show.
    const errors: unknown[] = [];
    const collect = async (fn: () => unknown) => {
      try {
        await fn();
      } catch (error) {
        errors.push(error);
      }
    };
    await collect(() => sealer.open(row.secret_sealed, "endpoint.secret:2"));
    await collect(() => sealer.open(`${row.secret_sealed.slice(0, -2)}AA`, "endpoint.secret:1"));
    await collect(() =>
      createSealer(new Keyring([{ id: "k2", key: randomBytes(32) }])).open(row.secret_sealed, ""),
    );
    await collect(() => sealer.open(secret, "endpoint.secret:1"));
    await collect(() => parseKeyring(`k1:${master.toString("base64")}x`));
    await collect(() => parseKeyring(master.toString("base64")));
    await collect(() =>
      tables
        .insertInto("endpoint")
        .values({
          id: 2,
          url: "u",
          secret_sealed: sealer.seal(secret, "endpoint.secret:2"),
          code_hash: codes.hash(code),
        })
        .execute(),
    );
    expect(constraintViolation(errors.at(-1))).toBe("unique");
    expect(errors).toHaveLength(7);
    const shown = errors
      .map((error) => {
        const e = error as Error & { cause?: unknown; detail?: unknown };
        return [e.message, e.stack, String(e.cause), JSON.stringify(e), String(e.detail)].join("\n");
      })
      .join("\n");
    for (const needle of [secret, code, master.toString("base64"), master.toString("hex")]) {
      expect(shown).not.toContain(needle);
    }

    // What is at rest.
    let atRest: Buffer;
    if (engine.dialect === "sqlite") {
      await db.close();
      atRest = Buffer.concat(
        [url, `${url}-wal`, `${url}-shm`]
          .filter((file) => fs.existsSync(file))
          .map((file) => fs.readFileSync(file)),
      );
    } else {
      const rows = await sql<{ row: string }>`select t::text as row from endpoint t`.execute(db.db);
      const dump = pgDump(url);
      if (dump !== undefined) expect(dump).toContain(marker);
      atRest = Buffer.from([dump ?? "", ...rows.rows.map((r) => r.row)].join("\n"));
    }
    expect(atRest.includes(Buffer.from(marker))).toBe(true);
    for (const needle of [secret, code]) {
      expect(atRest.includes(Buffer.from(needle))).toBe(false);
      expect(atRest.includes(Buffer.from(needle, "utf16le"))).toBe(false);
    }
    expect(atRest.includes(master)).toBe(false);
  });
});
