import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { appliedMigrations, openDatabase } from "@doorbell/store";
import { afterAll, describe, expect, it } from "vitest";

const child = fileURLToPath(new URL("./fixtures/migrate-child.ts", import.meta.url));
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-store-procs-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function start(file: string) {
  const proc = spawn(process.execPath, ["--conditions=@doorbell/source", "--import", "tsx", child, file], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  proc.stdout.on("data", (chunk) => {
    out += chunk;
  });
  proc.stderr.on("data", (chunk) => {
    err += chunk;
  });
  const ready = new Promise<void>((resolve, reject) => {
    const check = () => (out.includes("ready\n") ? resolve() : undefined);
    proc.stdout.on("data", check);
    proc.on("exit", () => reject(new Error(`child exited before ready: ${err}`)));
  });
  const done = new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
    proc.on("exit", (code) => resolve({ code, out, err }));
  });
  return { proc: proc as ChildProcessWithoutNullStreams, ready, done };
}

describe("migrate on one SQLite file from several processes at once", () => {
  it("applies each migration exactly once and every process starts", async () => {
    const file = path.join(dir, "shared.sqlite");
    const children = Array.from({ length: 4 }, () => start(file));
    await Promise.all(children.map((c) => c.ready));
    for (const c of children) c.proc.stdin.write("go\n");
    const results = await Promise.all(children.map((c) => c.done));
    for (const result of results) expect(result, result.err).toMatchObject({ code: 0 });
    const applied = results.flatMap((r) => {
      const last = r.out.trim().split("\n").at(-1) as string;
      return (JSON.parse(last) as { applied: { version: number }[] }).applied.map((m) => m.version);
    });
    expect(applied.sort()).toEqual([1, 2, 3]);
    const db = await openDatabase(file);
    expect((await appliedMigrations(db)).map((m) => m.version)).toEqual([1, 2, 3]);
    await db.close();
  }, 60_000);
});
