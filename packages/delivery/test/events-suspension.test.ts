import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { showDelivery } from "../src/index.js";
import {
  endpointForSuite,
  eventsSubscription,
  HOUR,
  MINUTE,
  type Received,
  runAtNextWake,
  T0,
} from "./harness.js";

// MCP Events: "after repeated failures (server-defined threshold), the server MAY suspend delivery
// (deliveryStatus.active: false); a subsequent successful refresh reactivates it and the server
// resumes retrying pending events". Here the threshold is a sustained failure rate: attempts failing
// with no success in between for at least 10 minutes and at least 10 times (the defaults).
forEachEngine({ describe, beforeAll, afterAll }, (fixture) => {
  const endpoint = endpointForSuite();

  describe.each(["mcp", "mcp-standard"] as const)("%s", (channel) => {
    const setup = () => eventsSubscription(fixture.db, endpoint.url, channel);

    it("a receiver failing everything for longer than 10 min and more than 10 times is suspended, with lastError and failedSince; a refresh reactivates it and the pending events are delivered", async () => {
      const { clock, engine, db, sub, send, queued } = await setup();
      endpoint.control.status = 503;
      const status = async () => (await engine.get(db, sub.id)).deliveryStatus;
      const drain = async () => {
        await engine.runDue();
        while ((await queued()) > 0 && (await status()).active)
          await runAtNextWake(engine, db, clock, sub.id);
      };

      // Five failed attempts within 3 min, then given up: not suspended.
      await send(1);
      await drain();
      expect(await status()).toMatchObject({ active: true, lastError: "http_5xx", failedSince: T0 });
      // Ten failures, but within 9 min: still not.
      clock.set(T0 + 6 * MINUTE);
      await send(2);
      await drain();
      expect((await status()).active).toBe(true);
      expect(endpoint.events()).toHaveLength(10);

      // The eleventh, 11 min after the first: suspended; evt_3 keeps its retry.
      clock.set(T0 + 11 * MINUTE);
      await send(3);
      await engine.runDue();
      expect(endpoint.events()).toHaveLength(11);
      const view = await engine.get(db, sub.id);
      expect(view.status).toBe("active");
      expect(view.deliveryStatus).toMatchObject({
        active: false,
        lastError: "http_5xx",
        failedSince: T0,
        lastDeliveryAt: null,
      });
      expect(await queued()).toBe(1);

      // Nothing is sent while suspended, queued or new.
      clock.set(T0 + HOUR);
      await send(4);
      await engine.runDue();
      expect(endpoint.events()).toHaveLength(11);

      // A refresh while the receiver still fails: the pending events are tried again, and the
      // first failure (the failures go on) suspends it again. evt_3 is not given up: its 5 min
      // window starts again at a refresh, with the attempts it made (2 of 5).
      await engine.renew(db, sub.id, {
        expiresAt: clock.now() + 2 * HOUR,
        refreshBefore: clock.now() + HOUR,
      });
      expect((await status()).active).toBe(true);
      await engine.runDue();
      expect(endpoint.events()).toHaveLength(12);
      expect((await status()).active).toBe(false);
      expect(await queued()).toBe(2);

      // The receiver is back: the refresh resumes delivery, both pending events arrive in order.
      clock.advance(MINUTE);
      endpoint.control.status = 200;
      await engine.renew(db, sub.id, {
        expiresAt: clock.now() + 2 * HOUR,
        refreshBefore: clock.now() + HOUR,
      });
      await engine.runDue();
      while ((await queued()) > 0) await runAtNextWake(engine, db, clock, sub.id);
      expect(
        endpoint
          .events()
          .slice(12)
          .map((e) => [e.json.eventId, e.json.cursor]),
      ).toEqual([
        ["evt_3", "c3"],
        ["evt_4", "c4"],
      ]);
      expect(await status()).toMatchObject({ active: true, lastError: null, failedSince: null });
      const row = await db
        .selectFrom("delivery_subscriptions")
        .select("consecutive_failures")
        .where("id", "=", sub.id)
        .executeTakeFirstOrThrow();
      expect(row.consecutive_failures).toBe(0);
      expect((await showDelivery(db, sub.id)).deadLetterList.map((d) => d.reason)).toEqual([
        "retries-exhausted",
        "retries-exhausted",
      ]);
    });

    it("failures with successes in between never suspend, however many and however long", async () => {
      const { clock, engine, db, sub, send, queued } = await setup();
      // Every odd event is refused, every even one accepted: 25 failed attempts over 15 min.
      const refused: Record<string, number> = {};
      for (let n = 1; n <= 10; n += 2) refused[`evt_${n}`] = 500;
      endpoint.control.byEventId = refused;
      for (let pair = 0; pair < 5; pair++) {
        const start = T0 + pair * 3 * MINUTE;
        clock.set(start);
        await send(2 * pair + 1);
        await send(2 * pair + 2);
        await engine.runDue();
        while ((await queued()) > 0) await runAtNextWake(engine, db, clock, sub.id);
        // The even event's success cleared the count: only the odd one's four retries are left.
        const row = await db
          .selectFrom("delivery_subscriptions")
          .select(["consecutive_failures", "failed_since", "delivery_active"])
          .where("id", "=", sub.id)
          .executeTakeFirstOrThrow();
        expect(row).toEqual({ consecutive_failures: 4, failed_since: start + 1000, delivery_active: 1 });
      }
      const wasRefused = (e: Received) => String(e.json.eventId) in refused;
      expect(endpoint.events().filter(wasRefused)).toHaveLength(25);
      expect(endpoint.events().filter((e) => !wasRefused(e))).toHaveLength(5);
      expect((await showDelivery(db, sub.id)).deadLetterList).toHaveLength(5);
    });
  });
});
