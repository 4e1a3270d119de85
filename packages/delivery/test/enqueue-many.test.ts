import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DAY, endpointForSuite, engineOn, fakeClock, MATCHES_EVENT } from "./harness.js";

forEachEngine({ describe, beforeAll, afterAll }, (fixture) => {
  const endpoint = endpointForSuite();

  async function subscribed(
    engine: Awaited<ReturnType<typeof engineOn>>["engine"],
    db: Awaited<ReturnType<typeof engineOn>>["db"],
    now: number,
  ) {
    return engine.subscribe(db, {
      channel: "push",
      url: endpoint.url,
      secret: (await import("./harness.js")).newSecret(),
      expiresAt: now + 30 * DAY,
      refreshBefore: now + 27 * DAY,
      requiresApproval: false,
    });
  }

  it("enqueueMany is enqueue for each item in order: FIFO per subscription, across many subscriptions", async () => {
    const clock = fakeClock();
    const { engine, db, store } = await engineOn(fixture.db, clock.now);
    const subs = [await subscribed(engine, db, clock.now()), await subscribed(engine, db, clock.now())];
    await engine.runDue();
    const ids = subs.map((sub) => sub.id);
    // Interleaved, in three transactions, mixing both call shapes and a single enqueue between them.
    for (let batch = 0; batch < 3; batch++) {
      await store.transaction(async (trx) => {
        const items = Array.from({ length: 7 }, (_, k) => ({
          subscriptionId: ids[k % 2] as string,
          event: { type: "intent.status.changed", data: { s: k % 2, n: batch * 100 + k } },
        }));
        expect(await engine.enqueueMany(trx, items)).toEqual(items.map(() => "queued"));
        await engine.enqueue(trx, ids[0] as string, {
          type: "intent.status.changed",
          data: { s: 0, n: batch * 100 + 50 },
        });
        await engine.enqueueMany(trx, ids[1] as string, [
          { type: "intent.status.changed", data: { s: 1, n: batch * 100 + 60 } },
          { type: "intent.status.changed", data: { s: 1, n: batch * 100 + 61 } },
        ]);
      });
    }
    await engine.runDue();
    const bySub = (s: number) =>
      endpoint
        .events()
        .filter((e) => e.json.data?.s === s)
        .map((e) => e.json.data?.n as number);
    const expected = (s: number) =>
      [0, 1, 2].flatMap((batch) => [
        ...[0, 1, 2, 3, 4, 5, 6].filter((k) => k % 2 === s).map((k) => batch * 100 + k),
        ...(s === 0 ? [batch * 100 + 50] : [batch * 100 + 60, batch * 100 + 61]),
      ]);
    expect(bySub(0)).toEqual(expected(0));
    expect(bySub(1)).toEqual(expected(1));
    const webhookIds = endpoint.events().map((e) => e.headers["webhook-id"]);
    expect(new Set(webhookIds).size).toBe(webhookIds.length);
  });

  it("coalesces matches, drops for an ended subscription, and writes nothing when one event is refused", async () => {
    const clock = fakeClock();
    const { engine, db, store } = await engineOn(fixture.db, clock.now);
    const live = await subscribed(engine, db, clock.now());
    const ended = await subscribed(engine, db, clock.now());
    await engine.runDue();
    await engine.end(db, ended.id, "unsubscribed", { notify: false });
    const at = new Date(clock.now()).toISOString();
    const results = await store.transaction((trx) =>
      engine.enqueueMany(trx, [
        {
          subscriptionId: live.id,
          event: { type: MATCHES_EVENT, data: { newMatches: 2, latestDeliveredAt: at } },
        },
        { subscriptionId: ended.id, event: { type: "intent.status.changed", data: {} } },
        {
          subscriptionId: live.id,
          event: { type: MATCHES_EVENT, data: { newMatches: 3, latestDeliveredAt: at } },
        },
        { subscriptionId: live.id, event: { type: "intent.status.changed", data: { n: 1 } } },
      ]),
    );
    expect(results).toEqual(["queued", "dropped", "coalesced", "queued"]);
    await expect(
      store.transaction((trx) =>
        engine.enqueueMany(trx, [
          { subscriptionId: live.id, event: { type: "intent.status.changed", data: { n: 2 } } },
          {
            subscriptionId: live.id,
            event: { type: MATCHES_EVENT, data: { newMatches: 0, latestDeliveredAt: at } },
          },
        ]),
      ),
    ).rejects.toThrow(/newMatches/);
    await expect(
      store.transaction((trx) =>
        engine.enqueueMany(trx, [{ subscriptionId: "sub_unknown", event: { type: "x", data: {} } }]),
      ),
    ).rejects.toMatchObject({ code: "ERR_DELIVERY_UNKNOWN_SUBSCRIPTION" });
    await engine.runDue();
    // The aggregate becomes a doorbell behind what was already queued (as with single enqueues).
    const events = endpoint.events();
    expect(events.map((e) => e.json.type)).toEqual(["intent.status.changed", MATCHES_EVENT]);
    expect(events[0]?.json.data).toEqual({ n: 1 });
    expect(events[1]?.json.data?.newMatches).toBe(5);
  });

  it("a subscription enqueued to before, then ended or purged: dropped, or refused with nothing of the call written", async () => {
    const clock = fakeClock();
    const { engine, db, store } = await engineOn(fixture.db, clock.now);
    const [kept, ended, purged] = [
      await subscribed(engine, db, clock.now()),
      await subscribed(engine, db, clock.now()),
      await subscribed(engine, db, clock.now()),
    ] as const;
    await engine.runDue();
    const item = (subscriptionId: string, n: number) => ({
      subscriptionId,
      event: { type: "intent.status.changed", data: { n } },
    });
    // Enqueued to once: from now on PostgreSQL enqueues do not read these subscriptions first.
    await store.transaction((trx) =>
      engine.enqueueMany(trx, [item(kept.id, 0), item(ended.id, 1), item(purged.id, 2)]),
    );
    await engine.runDue();
    await engine.end(db, ended.id, "unsubscribed", { notify: false });
    expect(
      await store.transaction((trx) => engine.enqueueMany(trx, [item(kept.id, 10), item(ended.id, 11)])),
    ).toEqual(["queued", "dropped"]);
    // What the purge does (push profile §6 rule 7).
    await db.deleteFrom("delivery_subscriptions").where("id", "=", purged.id).execute();
    // Refused even when the caller goes on and commits: nothing of the call was written.
    await store.transaction(async (trx) => {
      await expect(engine.enqueueMany(trx, [item(kept.id, 20), item(purged.id, 21)])).rejects.toMatchObject({
        code: "ERR_DELIVERY_UNKNOWN_SUBSCRIPTION",
      });
    });
    // And known again at once.
    await store.transaction(async (trx) => {
      await expect(engine.enqueueMany(trx, [item(purged.id, 30)])).rejects.toMatchObject({
        code: "ERR_DELIVERY_UNKNOWN_SUBSCRIPTION",
      });
    });
    expect(await store.transaction((trx) => engine.enqueueMany(trx, [item(kept.id, 40)]))).toEqual([
      "queued",
    ]);
    await engine.runDue();
    const delivered = endpoint.events().map((e) => e.json.data?.n as number);
    expect(delivered.sort((a, b) => a - b)).toEqual([0, 1, 2, 10, 40]);
  });
});
