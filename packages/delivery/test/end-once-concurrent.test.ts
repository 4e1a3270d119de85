import type { Database } from "@doorbell/store";
import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DeliveryTables } from "../src/index.js";
import { activeSubscription, endpointForSuite, engineOn, fakeClock } from "./harness.js";

// Issue 14 item 3: two processes ending the same subscription at once queued two
// subscription.ended rows (with different webhook-ids) in 18 of 20 rounds. Ending is now once.
const ROUNDS = 10;

forEachEngine({ describe, beforeAll, afterAll }, (fixture) => {
  const endpoint = endpointForSuite();

  it("concurrent ends queue subscription.ended and the last events once", async () => {
    const clock = fakeClock();
    const { engine, db } = await engineOn(fixture.db, clock.now);
    // PostgreSQL: a second handle stands for a second process. SQLite: one handle's transactions
    // queue (another handle in the same thread would block it on the write lock).
    const other =
      fixture.dialect === "postgres"
        ? ((await fixture.connect()) as unknown as Database<DeliveryTables>)
        : (fixture.db as unknown as Database<DeliveryTables>);
    const stores = [fixture.db as unknown as Database<DeliveryTables>, other];
    for (let round = 0; round < ROUNDS; round++) {
      const sub = await activeSubscription(engine, db, clock, endpoint.url);
      // Both transactions have read the subscription before either ends it (PostgreSQL only: on
      // SQLite the second transaction starts when the first commits).
      let arrived = 0;
      let release: () => void = () => {};
      const bothRead = new Promise<void>((resolve) => {
        release = resolve;
      });
      const endIn = (store: Database<DeliveryTables>, reason: string) =>
        store.transaction(async (trx) => {
          await trx.selectFrom("delivery_subscriptions").select("status").where("id", "=", sub.id).execute();
          if (fixture.dialect === "postgres") {
            arrived++;
            if (arrived === 2) release();
            await bothRead;
          }
          return engine.end(trx, sub.id, reason, {
            notify: true,
            lastEvents: [
              { type: "intent.status.changed", timestamp: new Date(clock.now()).toISOString(), data: {} },
            ],
          });
        });
      const views = await Promise.all(stores.map((store, i) => endIn(store, `reason-${i}`)));
      expect(views.map((view) => view.status)).toEqual(["ended", "ended"]);
      const rows = await db
        .selectFrom("delivery_outbox")
        .select(["type", "webhook_id"])
        .where("subscription_id", "=", sub.id)
        .orderBy("seq")
        .execute();
      expect(rows.map((row) => row.type)).toEqual(["intent.status.changed", "subscription.ended"]);
      // One reason won, and the stored one is the one its subscription.ended carries.
      const stored = await engine.get(db, sub.id);
      const ended = await db
        .selectFrom("delivery_outbox")
        .select("body")
        .where("subscription_id", "=", sub.id)
        .where("type", "=", "subscription.ended")
        .executeTakeFirstOrThrow();
      expect(JSON.parse(ended.body).data.reason).toBe(stored.endedReason);
    }
  });
});
