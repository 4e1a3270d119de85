import { type Database, migrate, notificationMigrations, sql } from "@doorbell/store";
import { expect, it } from "vitest";
import { forEachEngine } from "./engines.js";

/** Collects what a listener hears, and waits for the next few. */
function recorder() {
  const heard: (string | undefined)[] = [];
  let waiting: { count: number; resolve: () => void } | undefined;
  return {
    heard,
    listener(payload?: string) {
      heard.push(payload);
      if (waiting && heard.length >= waiting.count) waiting.resolve();
    },
    until(count: number): Promise<void> {
      if (heard.length >= count) return Promise.resolve();
      return new Promise((resolve) => {
        waiting = { count, resolve };
      });
    },
  };
}

// Two handles stand for two processes: each has its own connections (SQLite: its own file
// connections, whose commits the other sees only through the file; PostgreSQL: its own pool and
// listening connection).
forEachEngine((fixture) => {
  const pair = async (): Promise<[Database, Database]> => {
    await migrate(fixture.db, [notificationMigrations]);
    return [fixture.db, await fixture.connect()];
  };

  it("a notification reaches every handle's listener, the sender's too, in order", async () => {
    const [one, two] = await pair();
    const there = recorder();
    const here = recorder();
    const stopThere = await two.listen("test_changes", there.listener);
    const stopHere = await one.listen("test_changes", here.listener);
    await one.notify("test_changes", "a");
    await one.notify("test_changes", "b");
    await one.notify("other_channel", "not for them");
    await Promise.all([there.until(2), here.until(2)]);
    expect(there.heard).toEqual(["a", "b"]);
    expect(here.heard).toEqual(["a", "b"]);
    await stopThere();
    await stopHere();
  });

  it("a notification inside a transaction is heard once it commits, and never when it rolls back", async () => {
    const [one, two] = await pair();
    const there = recorder();
    const stop = await two.listen("test_commits", there.listener);
    await one
      .transaction(async (trx) => {
        await one.notify("test_commits", "rolled back", trx as never);
        throw new Error("roll back");
      })
      .catch(() => {});
    await one.transaction(async (trx) => {
      await one.notify("test_commits", "committed", trx as never);
      // Not yet: the transaction is still open.
      await new Promise((resolve) => setTimeout(resolve, 80));
      expect(there.heard).toEqual([]);
    });
    await there.until(1);
    // A later one proves the rolled-back one is not merely late.
    await one.notify("test_commits", "after");
    await there.until(2);
    expect(there.heard).toEqual(["committed", "after"]);
    await stop();
  });

  it("refuses a channel that is not an identifier and a payload over the engines' bound", async () => {
    const [one] = await pair();
    await expect(one.notify("Bad-Channel", "x")).rejects.toThrow(/lower-case SQL identifier/);
    await expect(one.notify("test_big", "x".repeat(8_000))).rejects.toThrow(/at most 7999 bytes/);
    await expect(one.listen("drop table", () => {})).rejects.toThrow(/lower-case SQL identifier/);
  });

  if (fixture.dialect === "postgres") {
    it("one listening connection per handle for all its channels; after it is lost, listeners resync and hear again", async () => {
      const [one, two] = await pair();
      const a = recorder();
      const b = recorder();
      const stopA = await two.listen("test_one", a.listener);
      const stopB = await two.listen("test_two", b.listener);
      const listeners = async () =>
        (
          await sql<{ pid: number }>`select pid from pg_stat_activity
            where datname = current_database() and query like 'listen %'`.execute(one.db)
        ).rows;
      expect(await listeners()).toHaveLength(1);
      await sql`select pg_terminate_backend(${(await listeners())[0]?.pid})`.execute(one.db);
      // Told at once that something may have been missed, and again once listening anew.
      await Promise.all([a.until(2), b.until(2)]);
      expect(a.heard).toEqual([undefined, undefined]);
      await one.notify("test_one", "after");
      await one.notify("test_two", "after too");
      await Promise.all([a.until(3), b.until(3)]);
      expect(a.heard[2]).toBe("after");
      expect(b.heard[2]).toBe("after too");
      await stopA();
      await stopB();
      expect(await listeners()).toHaveLength(0);
    });
  }

  if (fixture.dialect === "sqlite") {
    it("SQLite keeps a minute of notifications, not more", async () => {
      const [one] = await pair();
      const old = Date.now() - 120_000;
      await sql`insert into store_notifications (channel, payload, at) values ('test_old', 'x', ${old})`.execute(
        one.db,
      );
      for (let i = 0; i < 64; i++) await one.notify("test_prune", String(i));
      const left = await sql<{
        n: number;
      }>`select count(*) as n from store_notifications where at = ${old}`.execute(one.db);
      expect(Number(left.rows[0]?.n)).toBe(0);
    });
  }
});
