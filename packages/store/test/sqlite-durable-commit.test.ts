// synchronous: "full" on SQLite: every commit is made durable by an fsync of the WAL that starts
// after it, on the thread pool, and nobody is answered before that fsync is done: not the
// committer, not a query or a `read` that could have seen the commit. A failed fsync stops the handle.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { type Database, type Kysely, openDatabase, sql } from "@doorbell/store";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";

interface Tables {
  entry: { id: number; body: string };
}

type FsyncCallback = (error: NodeJS.ErrnoException | null) => void;

/** Holds every fsync of the WAL until `release`, or fails it; other files pass through. */
function controlFsync() {
  const real = fs.fsync.bind(fs);
  const held: FsyncCallback[] = [];
  let mode: "pass" | "hold" | "fail" = "pass";
  let calls = 0;
  const spy = vi.spyOn(fs, "fsync").mockImplementation(((fd: number, callback: FsyncCallback) => {
    calls += 1;
    if (mode === "hold") held.push(callback);
    else if (mode === "fail") callback(Object.assign(new Error("EIO: i/o error, fsync"), { code: "EIO" }));
    else real(fd, callback);
  }) as typeof fs.fsync);
  return {
    get calls() {
      return calls;
    },
    get held() {
      return held.length;
    },
    hold: () => {
      mode = "hold";
    },
    fail: () => {
      mode = "fail";
    },
    release: () => {
      mode = "pass";
      for (const callback of held.splice(0)) callback(null);
    },
    restore: () => spy.mockRestore(),
  };
}

/** Lets queued callbacks and I/O run a few times, so anything not held back would settle. */
const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
};

/** Whether a promise has settled by now. */
const tracked = <T>(promise: Promise<T>) => {
  const state = { settled: false, promise };
  promise.then(
    () => {
      state.settled = true;
    },
    () => {
      state.settled = true;
    },
  );
  return state;
};

describe("SQLite synchronous=full: durable before anyone hears of it", () => {
  let dir: string;
  let store: Database;
  let fsync: ReturnType<typeof controlFsync>;
  const tables = () => store.db as unknown as Kysely<Tables>;
  const count = () =>
    tables()
      .selectFrom("entry")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .compile();

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-durable-"));
    store = await openDatabase(path.join(dir, "db.sqlite"));
    await tables()
      .schema.createTable("entry")
      .addColumn("id", "integer", (c) => c.primaryKey())
      .addColumn("body", "text", (c) => c.notNull())
      .execute();
  });

  afterEach(() => fsync?.restore());

  afterAll(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("answers a commit, and every read that could see it, only after the WAL's fsync", async () => {
    fsync = controlFsync();
    fsync.hold();
    const before = Number((await store.read(count()))[0]?.n);
    const commit = tracked(
      store.transaction(async (trx) => {
        await (trx as unknown as Kysely<Tables>).insertInto("entry").values({ id: 1, body: "one" }).execute();
        return "committed";
      }),
    );
    await vi.waitFor(() => expect(fsync.held).toBe(1));
    const fastRead = tracked(store.read(count()));
    const query = tracked(tables().selectFrom("entry").selectAll().execute());
    await settle();
    expect(commit.settled).toBe(false);
    expect(fastRead.settled).toBe(false);
    expect(query.settled).toBe(false);

    fsync.release();
    expect(await commit.promise).toBe("committed");
    expect(Number((await fastRead.promise)[0]?.n)).toBe(before + 1);
    expect(await query.promise).toEqual([{ id: 1, body: "one" }]);
  });

  it("does not fsync for reads; commits made during an fsync share the next one, two at most at once", async () => {
    fsync = controlFsync();
    await store.read(count());
    await tables().selectFrom("entry").selectAll().execute();
    expect(fsync.calls).toBe(0);

    fsync.hold();
    const first = store.transaction((trx) =>
      (trx as unknown as Kysely<Tables>).insertInto("entry").values({ id: 2, body: "two" }).execute(),
    );
    await vi.waitFor(() => expect(fsync.held).toBe(1));
    // Committed while the first fsync runs, which therefore does not cover them: the second starts
    // at once for the first of them; the others wait, as a third may not start yet.
    const more = [3, 4, 5].map((id) => tables().insertInto("entry").values({ id, body: "more" }).execute());
    await vi.waitFor(() => expect(fsync.held).toBe(2));
    await settle();
    expect(fsync.held).toBe(2);
    fsync.release();
    await Promise.all([first, ...more]);
    // One more fsync covered both later commits: three for four commits.
    expect(fsync.calls).toBe(3);
    expect(Number((await store.read(count()))[0]?.n)).toBe(5);
  });

  it("refuses all further work once an fsync failed", async () => {
    fsync = controlFsync();
    fsync.fail();
    await expect(
      tables().insertInto("entry").values({ id: 6, body: "lost?" }).execute(),
    ).rejects.toMatchObject({ code: "ERR_STORE_IO" });
    await expect(store.read(count())).rejects.toMatchObject({ code: "ERR_STORE_IO" });
    await expect(tables().selectFrom("entry").selectAll().execute()).rejects.toMatchObject({
      code: "ERR_STORE_IO",
    });
    await expect(store.transaction(async () => 1)).rejects.toMatchObject({ code: "ERR_STORE_IO" });
  });
});

describe("SQLite synchronous=normal", () => {
  it("never fsyncs the WAL after a commit", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-normal-"));
    const store = await openDatabase({ url: path.join(dir, "db.sqlite"), synchronous: "normal" });
    const fsync = controlFsync();
    try {
      await sql`create table t (n integer)`.execute(store.db);
      await store.transaction((trx) => sql`insert into t values (1)`.execute(trx));
      expect(fsync.calls).toBe(0);
      const { rows } = await sql<{ synchronous: number }>`pragma synchronous`.execute(store.db);
      expect(rows[0]?.synchronous).toBe(1);
    } finally {
      fsync.restore();
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
