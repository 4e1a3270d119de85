import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  activeSubscription,
  endpointForSuite,
  engineOn,
  eventsSubscription,
  fakeClock,
  runAtNextWake,
} from "./harness.js";

// Retry-After on 429 and 503 through the engine, on both channels: the next attempt waits as
// asked, clamped to max(2 × the scheduled delay, 1 min) (retry.ts). On the MCP channels, which
// retry each event on its own, a throttling answer also holds the subscription's other events.
const SECOND = 1000;

forEachEngine({ describe, beforeAll, afterAll }, (fixture) => {
  const endpoint = endpointForSuite();

  describe.each([429, 503])("push, %i", (status) => {
    it("Retry-After: 30 is honoured; Retry-After: 3600 is clamped to one minute", async () => {
      const clock = fakeClock();
      const { engine, db, store } = await engineOn(fixture.db, clock.now);
      const sub = await activeSubscription(engine, db, clock, endpoint.url);
      endpoint.control.script = [status, status];
      endpoint.control.headers = { "retry-after": "30" };
      for (let n = 1; n <= 2; n++) {
        await store.transaction((trx) =>
          engine.enqueue(trx, sub.id, { type: "intent.status.changed", data: { n } }),
        );
      }
      const first = clock.now();
      await engine.runDue();
      endpoint.control.headers = { "retry-after": "3600" };
      expect(await runAtNextWake(engine, db, clock, sub.id)).toBe(first + 30 * SECOND);
      endpoint.control.headers = {};
      // The second delay of the schedule is 5 min, so an hour is cut to max(2 × 5 min, 1 min).
      expect(await runAtNextWake(engine, db, clock, sub.id)).toBe(first + 30 * SECOND + 10 * 60 * SECOND);
      // The queue waited behind its head all along, then went in order.
      expect(endpoint.events().map((e) => e.json.data?.n)).toEqual([1, 1, 1, 2]);
    });
  });

  describe.each([
    ["mcp", 429],
    ["mcp", 503],
    ["mcp-standard", 429],
  ] as const)("%s, %i", (channel, status) => {
    it("the refused event waits as asked and the others wait with it, none of them counted as attempts", async () => {
      const { clock, engine, db, sub, send } = await eventsSubscription(fixture.db, endpoint.url, channel);
      endpoint.control.byEventId = { evt_1: status };
      endpoint.control.headers = { "retry-after": "20" };
      for (let n = 1; n <= 3; n++) await send(n);
      const first = clock.now();
      await engine.runDue();
      const sent = () => endpoint.events().map((e) => e.json.eventId);
      expect(sent()).toEqual(["evt_1"]);
      const rows = await db
        .selectFrom("delivery_outbox")
        .select(["webhook_id", "attempts", "next_attempt_at"])
        .where("subscription_id", "=", sub.id)
        .orderBy("seq")
        .execute();
      expect(rows.map((row) => [row.attempts, Number(row.next_attempt_at) - first])).toEqual([
        [1, 20 * SECOND],
        [0, 20 * SECOND],
        [0, 20 * SECOND],
      ]);

      endpoint.control.byEventId = {};
      endpoint.control.headers = {};
      clock.set(first + 19 * SECOND);
      await engine.runDue();
      expect(sent()).toEqual(["evt_1"]);
      expect(await runAtNextWake(engine, db, clock, sub.id)).toBe(first + 20 * SECOND);
      expect(sent()).toEqual(["evt_1", "evt_1", "evt_2", "evt_3"]);
    });
  });

  it("mcp: a 500 holds nothing back (each event is retried on its own)", async () => {
    const { engine, send } = await eventsSubscription(fixture.db, endpoint.url, "mcp");
    endpoint.control.byEventId = { evt_1: 500 };
    endpoint.control.headers = { "retry-after": "20" };
    for (let n = 1; n <= 3; n++) await send(n);
    await engine.runDue();
    expect(endpoint.events().map((e) => e.json.eventId)).toEqual(["evt_1", "evt_2", "evt_3"]);
  });
});
