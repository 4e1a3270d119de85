import { forEachEngine } from "@doorbell/store/testing";
import { createMcpVerifier, createStandardVerifier } from "@doorbell/webhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { showDelivery } from "../src/index.js";
import {
  endpointForSuite,
  eventsSubscription,
  type Received,
  runAtNextWake,
  signedAt,
  T0,
} from "./harness.js";

// MCP Events webhooks retry each event on its own (the sketch's "Delivery model"): one event the
// receiver keeps refusing never holds back the others, is retried a few times within minutes and
// then given up (dead-lettered) without suspending the subscription. The payload cursor is a
// safe-to-persist watermark: an event sent while an older one is pending goes without it.
const SECOND = 1000;

forEachEngine({ describe, beforeAll, afterAll }, (fixture) => {
  const endpoint = endpointForSuite();

  describe.each(["mcp", "mcp-standard"] as const)("%s", (channel) => {
    const setup = () => eventsSubscription(fixture.db, endpoint.url, channel);
    const eventIds = () => endpoint.events().map((e) => e.json.eventId);

    it("one refused event: the others are delivered at once and in order; it is retried on its own up to the bound, then dead-lettered; the subscription stays active", async () => {
      const { clock, engine, db, sub, send, queued } = await setup();
      endpoint.control.byEventId = { evt_2: 500 };
      for (let n = 1; n <= 5; n++) await send(n);
      await engine.runDue();
      expect(eventIds()).toEqual(["evt_1", "evt_2", "evt_3", "evt_4", "evt_5"]);
      expect(endpoint.events().every((e) => signedAt(e) === T0)).toBe(true);

      // Enqueued while evt_2 waits for its retry: sent at once.
      clock.set(T0 + 500);
      await send(6);
      await engine.runDue();
      expect(eventIds().at(-1)).toBe("evt_6");
      expect(signedAt(endpoint.events().at(-1) as Received)).toBe(T0);

      while ((await queued()) > 0) await runAtNextWake(engine, db, clock, sub.id);
      const refused = endpoint.events().filter((e) => e.json.eventId === "evt_2");
      // 1 s, 5 s, 30 s and 2 min apart (no jitter in these tests): five attempts within 5 min.
      expect(refused.map((e) => (signedAt(e) - T0) / SECOND)).toEqual([0, 1, 6, 36, 156]);
      if (channel === "mcp-standard") {
        expect(new Set(refused.map((e) => e.headers["webhook-id"]))).toEqual(new Set(["evt_2"]));
      }
      expect(new Set(refused.map((e) => e.body)).size).toBe(1);
      expect(
        endpoint
          .events()
          .filter((e) => e.json.eventId !== "evt_2")
          .map((e) => e.json.eventId),
      ).toEqual(["evt_1", "evt_3", "evt_4", "evt_5", "evt_6"]);

      const log = await showDelivery(db, sub.id);
      expect(log.deadLetterList).toHaveLength(1);
      expect(log.deadLetterList[0]).toMatchObject({
        type: "incident.created",
        reason: "retries-exhausted",
        category: "http_5xx",
        attempts: 5,
      });
      expect(log.deadLetterList[0]?.body).toBe(refused[0]?.body);
      const view = await engine.get(db, sub.id);
      expect(view.status).toBe("active");
      expect(view.deliveryStatus).toMatchObject({ active: true, lastError: "http_5xx" });

      // Given up: the next event is delivered, with its cursor, and clears the failure.
      await send(7);
      await engine.runDue();
      expect(endpoint.events().at(-1)?.json).toMatchObject({ eventId: "evt_7", cursor: "c7" });
      expect((await engine.get(db, sub.id)).deliveryStatus).toMatchObject({
        active: true,
        lastError: null,
        failedSince: null,
      });
    });

    it("the watermark: an event sent while an older one is pending has no cursor; the oldest pending one keeps its own", async () => {
      const { clock, engine, db, sub, send, queued } = await setup();
      endpoint.control.byEventId = { evt_2: 500 };
      for (let n = 1; n <= 3; n++) await send(n);
      await engine.runDue();
      // evt_3 follows evt_2's failure in the same pass; evt_4 is sent while evt_2 waits.
      clock.set(T0 + 500);
      await send(4);
      await engine.runDue();
      // evt_2 is accepted on its retry, with its cursor; after it, cursors again.
      delete endpoint.control.byEventId.evt_2;
      await runAtNextWake(engine, db, clock, sub.id);
      await send(5);
      await engine.runDue();
      expect(await queued()).toBe(0);
      expect(endpoint.events().map((e) => [e.json.eventId, e.json.cursor ?? null])).toEqual([
        ["evt_1", "c1"],
        ["evt_2", "c2"],
        ["evt_3", null],
        ["evt_4", null],
        ["evt_2", "c2"],
        ["evt_5", "c5"],
      ]);
      // Without its cursor the body is the same event, signed as sent; the ids stay.
      const [withCursor, without] = [endpoint.events()[0], endpoint.events()[2]];
      expect(Object.keys(without?.json ?? {})).toEqual(
        Object.keys(withCursor?.json ?? {}).filter((key) => key !== "cursor"),
      );
      expect("cursor" in (without?.json ?? {})).toBe(false);
      for (const event of endpoint.events()) {
        const headers = event.headers as Record<string, string>;
        if (channel === "mcp") {
          createMcpVerifier({ secrets: [sub.secret], clock: clock.now }).verify(headers, event.body);
        } else {
          expect(
            createStandardVerifier({ secrets: [sub.secret], clock: clock.now }).verify(headers, event.body)
              .id,
          ).toBe(event.json.eventId);
        }
      }
    });

    it("the next wake-up is the earliest retry in the queue, not its head's", async () => {
      const { clock, engine, db, sub, send } = await setup();
      endpoint.control.byEventId = { evt_1: 500, evt_2: 500 };
      await send(1);
      await engine.runDue(); // evt_1: retry at +1 s
      clock.set(T0 + SECOND);
      await send(2);
      await engine.runDue(); // evt_1 fails again (retry at +6 s), evt_2 fails (retry at +2 s)
      const row = await db
        .selectFrom("delivery_subscriptions")
        .select("wake_at")
        .where("id", "=", sub.id)
        .executeTakeFirstOrThrow();
      expect(row.wake_at).toBe(T0 + 2 * SECOND);
      delete endpoint.control.byEventId.evt_2;
      await runAtNextWake(engine, db, clock, sub.id);
      const last = endpoint.events().at(-1);
      expect(last?.json.eventId).toBe("evt_2");
      expect(signedAt(last as Received)).toBe(T0 + 2 * SECOND);
      // evt_1 is still waiting: evt_2 went without a cursor.
      expect(last?.json.cursor).toBeUndefined();
    });
  });
});
