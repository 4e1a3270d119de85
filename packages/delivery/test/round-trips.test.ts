/**
 * Issue 14 item 7: the statements an enqueue and a drain cost. On PostgreSQL each statement is a
 * round trip that the enqueue waits for while it holds its subscriptions' rows, and that the
 * workers pay per delivery; the counts are observed on the real `pg` client. On both engines the
 * same run checks what the fewer statements must keep: every event once, in order per subscription.
 */
import { sql } from "@doorbell/store";
import { forEachEngine, pgStatementsDuring } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnqueueItem } from "../src/index.js";
import { DEFAULT_PER_HOST_CONCURRENCY } from "../src/worker.js";
import {
  activeSubscription,
  activeSubscriptions,
  endpointForSuite,
  engineOn,
  fakeClock,
  MATCHES_EVENT,
} from "./harness.js";

/** As many as one destination host may have in hand at once (fair delivery): all claimed together. */
const SUBSCRIPTIONS = DEFAULT_PER_HOST_CONCURRENCY;
/** Fewer than a head read's prefetch (8, worker.ts): one read finds a whole queue and its end. */
const EVENTS_EACH = 5;

/** The text of every statement the `pg` clients send while `fn` runs. */
const statementsDuring = async (fn: () => Promise<unknown>): Promise<string[]> =>
  (await pgStatementsDuring(fn)).texts;

/** A worker's read of queued rows to send (its bodies), as opposed to the release's look at the head. */
const isHeadRead = (text: string) =>
  /^\s*select/i.test(text) && /delivery_outbox/.test(text) && /webhook_id/.test(text) && /body/.test(text);

forEachEngine({ describe, beforeAll, afterAll }, (fixture) => {
  const endpoint = endpointForSuite();

  it("a host's worth of subscriptions enqueued in one transaction and drained together: each in order, once; on PostgreSQL the enqueue is 4 statements (3 once the subscriptions are known) and the drain reads all heads with one", async () => {
    const clock = fakeClock();
    const { engine, db, store } = await engineOn(fixture.db, clock.now);
    const subs = (await activeSubscriptions(engine, db, clock, endpoint.url, SUBSCRIPTIONS)).map(
      (sub) => sub.id,
    );
    const items: EnqueueItem[] = [];
    for (let n = 0; n < EVENTS_EACH; n++) {
      for (const [s, id] of subs.entries()) {
        items.push({ subscriptionId: id, event: { type: "intent.status.changed", data: { s, n } } });
      }
    }

    const enqueued = await statementsDuring(() => store.transaction((trx) => engine.enqueueMany(trx, items)));
    const drained = await statementsDuring(() => engine.runDue());

    const events = endpoint.events();
    expect(events).toHaveLength(SUBSCRIPTIONS * EVENTS_EACH);
    for (let s = 0; s < SUBSCRIPTIONS; s++) {
      const ns = events.filter((e) => e.json.data?.s === s).map((e) => e.json.data?.n);
      expect(ns).toEqual(Array.from({ length: EVENTS_EACH }, (_, n) => n));
    }
    // Delivered rows are gone (SQLite deletes them in bulk at release, delivered.ts).
    expect(await db.selectFrom("delivery_outbox").select("id").execute()).toHaveLength(0);
    if (fixture.dialect === "postgres") {
      // begin; read the subscriptions; take sequence numbers, insert, notify; commit.
      expect(enqueued).toHaveLength(4);
      // Claimed together, they ask in the same turn; a short read also tells each that
      // its queue is done, so none reads again to find it empty (it was two reads each).
      expect(drained.filter(isHeadRead)).toHaveLength(1);
      // Delivered rows are deleted by statements that commit without waiting for the WAL flush,
      // for that statement's own transaction only (set_config's third argument), whatever their count.
      const deletes = drained.filter((text) => /delete from delivery_outbox/i.test(text));
      expect(deletes.length).toBeGreaterThan(0);
      for (const text of deletes) {
        expect(text).toMatch(/set_config\('synchronous_commit', 'off', true\)/);
        expect(text).toMatch(/id = any\(\$1::bigint\[\]\)/);
      }
    }

    // Enqueued to before, the same subscriptions are not read again: begin; append; commit.
    const again = items.map((item) => ({
      ...item,
      event: { ...item.event, data: { ...item.event.data, n: (item.event.data.n as number) + EVENTS_EACH } },
    }));
    const enqueuedAgain = await statementsDuring(() =>
      store.transaction((trx) => engine.enqueueMany(trx, again)),
    );
    await engine.runDue();
    if (fixture.dialect === "postgres") expect(enqueuedAgain).toHaveLength(3);
    for (let s = 0; s < SUBSCRIPTIONS; s++) {
      const ns = endpoint
        .events()
        .filter((e) => e.json.data?.s === s)
        .map((e) => e.json.data?.n);
      expect(ns).toEqual(Array.from({ length: 2 * EVENTS_EACH }, (_, n) => n));
    }
  });

  /** A matches report of `n` for each subscription in `ids`, as the holder enqueues one per intent. */
  const reports = (ids: readonly string[], n: number): EnqueueItem[] =>
    ids.map((subscriptionId) => ({
      subscriptionId,
      event: {
        type: MATCHES_EVENT,
        data: { subscriptionId, newMatches: n, latestDeliveredAt: "2026-11-30T12:00:00Z" },
      },
    }));
  const waitingCounts = async (db: Awaited<ReturnType<typeof engineOn>>["db"], ids: readonly string[]) =>
    (
      await db
        .selectFrom("delivery_subscriptions")
        .select(["id", "agg_new_matches"])
        .where("id", "in", ids)
        .orderBy("id")
        .execute()
    ).map((row) => row.agg_new_matches);

  it("matches reports for many subscriptions add to each one's waiting count; on PostgreSQL their statements do not grow with the subscriptions", async () => {
    const clock = fakeClock();
    const { engine, db, store } = await engineOn(fixture.db, clock.now);
    const subs = (await activeSubscriptions(engine, db, clock, endpoint.url, SUBSCRIPTIONS)).map(
      (sub) => sub.id,
    );
    // The first report of each is queued as a doorbell; from then on they wait in the window.
    await store.transaction((trx) => engine.enqueueMany(trx, reports(subs, 1)));
    await engine.runDue();
    const few = await statementsDuring(() =>
      store.transaction((trx) => engine.enqueueMany(trx, reports(subs.slice(0, 2), 2))),
    );
    const many = await statementsDuring(() =>
      store.transaction((trx) => engine.enqueueMany(trx, reports(subs, 3))),
    );
    expect(await waitingCounts(db, subs.slice(0, 2))).toEqual([5, 5]);
    expect(await waitingCounts(db, subs.slice(2))).toEqual(subs.slice(2).map(() => 3));
    if (fixture.dialect === "postgres") {
      expect(many.length).toBe(few.length);
      expect(many.filter((text) => /update delivery_subscriptions/i.test(text))).toHaveLength(1);
    }
  });

  if (fixture.dialect === "postgres") {
    it("two transactions adding matches to one subscription at once both count (PostgreSQL: the second waits for the first's row lock)", async () => {
      const clock = fakeClock();
      const { engine, db, store } = await engineOn(fixture.db, clock.now);
      const sub = (await activeSubscription(engine, db, clock, endpoint.url)).id;
      await store.transaction((trx) => engine.enqueueMany(trx, reports([sub], 1)));
      await engine.runDue();
      let releaseFirst = () => {};
      const firstHolds = new Promise<void>((resolve) => {
        releaseFirst = resolve;
      });
      let firstAdded = () => {};
      const added = new Promise<void>((resolve) => {
        firstAdded = resolve;
      });
      const first = store.transaction(async (trx) => {
        await engine.enqueueMany(trx, reports([sub], 2));
        firstAdded();
        await firstHolds;
      });
      await added;
      // The second reads the count before the first commits, then waits on the row's lock.
      const second = store.transaction((trx) => engine.enqueueMany(trx, reports([sub], 4)));
      const lockWaits = () =>
        sql<{ n: string }>`select count(*) as n from pg_stat_activity
          where wait_event_type = 'Lock' and datname = current_database()`.execute(db);
      while (Number((await lockWaits()).rows[0]?.n) === 0) await new Promise((r) => setTimeout(r, 5));
      releaseFirst();
      await Promise.all([first, second]);
      expect(await waitingCounts(db, [sub])).toEqual([6]);
    });
  }
});
