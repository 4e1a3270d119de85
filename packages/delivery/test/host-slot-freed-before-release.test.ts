import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { activeSubscriptions, engineOn, hostDeferrals, startEndpoint, untilReceived } from "./harness.js";

// A subscription gives its host slot back once its attempts are done, before its release is
// written: the release and the next claim share a commit (SQLite) or follow at once, and a slot
// still counted then made a subscription claimed with it look over its host's cap, put back for
// a second or two with its doorbells due and its host idle.

const SUBSCRIPTIONS = 4;
const EVENTS_EACH = 12;

forEachEngine({ describe, beforeAll, afterAll }, (fixture) => {
  it("as many subscriptions of one host as its cap are never put back for want of a slot", async () => {
    const endpoint = await startEndpoint();
    const { engine, db, store } = await engineOn(fixture.db, Date.now);
    const subs = await activeSubscriptions(engine, db, { now: Date.now }, endpoint.url, SUBSCRIPTIONS);
    await store.transaction(async (trx) => {
      for (let n = 1; n <= EVENTS_EACH; n++)
        for (const sub of subs) await engine.enqueue(trx, sub.id, { type: "tick", data: { sub: sub.id, n } });
    });

    // Each claim sends two doorbells and releases with more due, so every subscription is released
    // and claimed again five times while the others of its host are in hand.
    const worker = engine.worker({
      concurrency: 8,
      perHostConcurrency: SUBSCRIPTIONS,
      maxPerClaim: 2,
      pollMs: 20,
    });
    worker.start();
    try {
      await untilReceived(endpoint, SUBSCRIPTIONS * EVENTS_EACH);
      expect(endpoint.events()).toHaveLength(SUBSCRIPTIONS * EVENTS_EACH);
      expect(await hostDeferrals(engine)).toBe(0);
    } finally {
      await worker.stop();
      await endpoint.close();
    }
  });

  it("twice as many subscriptions of one host as its cap: those over it wait for the host's next free slot, none is put back", async () => {
    const endpoint = await startEndpoint();
    const { engine, db, store } = await engineOn(fixture.db, Date.now);
    const cap = 3;
    const subs = await activeSubscriptions(engine, db, { now: Date.now }, endpoint.url, 2 * cap);
    await store.transaction(async (trx) => {
      for (let n = 1; n <= 4; n++)
        for (const sub of subs) await engine.enqueue(trx, sub.id, { type: "tick", data: { sub: sub.id, n } });
    });
    // One claim takes all six; three start, three wait. Put back, they would wait 1–2 s each.
    const worker = engine.worker({ concurrency: 8, perHostConcurrency: cap, pollMs: 20 });
    worker.start();
    try {
      await untilReceived(endpoint, subs.length * 4);
      expect(endpoint.events()).toHaveLength(subs.length * 4);
      for (const sub of subs) {
        const ns = endpoint
          .events()
          .filter((e) => e.json.data?.sub === sub.id)
          .map((e) => e.json.data?.n);
        expect(ns).toEqual([1, 2, 3, 4]);
      }
      expect(await hostDeferrals(engine)).toBe(0);
    } finally {
      await worker.stop();
      await endpoint.close();
    }
  });
});
