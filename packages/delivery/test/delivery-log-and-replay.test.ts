import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listDeliveries, replayDeadLetter, showDelivery } from "../src/index.js";
import {
  activeSubscription,
  DAY,
  endpointForSuite,
  engineOn,
  fakeClock,
  newSecret,
  runAtNextWake,
} from "./harness.js";

// Issue #17, the operator's delivery log: failed attempts with category and time, the next
// attempt, the doorbells given up on, and their replay. Never a secret or an endpoint.
forEachEngine({ describe, beforeAll, afterAll }, (fixture) => {
  const endpoint = endpointForSuite();

  it("an MCP subscription's exhausted doorbell is logged, dead-lettered, and a replay resumes delivery with the same id and bytes", async () => {
    const clock = fakeClock();
    // Suspended at the event's last attempt: its five failures reach this threshold.
    const { engine, db, store } = await engineOn(fixture.db, clock.now, {
      events: { suspendAfterFailures: 5, suspendAfterMs: 0 },
    });
    const sub = await activeSubscription(engine, db, clock, endpoint.url, {
      channel: "mcp",
      subscriberId: "1c0ffee0-58cc-4372-a567-0e02b2c3d479",
    });
    endpoint.control.status = 503;
    await store.transaction((trx) =>
      engine.enqueue(trx, sub.id, {
        type: "incident.created",
        eventId: "evt_1",
        cursor: "c1",
        data: { n: 1 },
      }),
    );
    await engine.runDue();
    // While retrying: the next attempt is known and the failures are listed with their category.
    const retrying = await showDelivery(db, sub.id);
    expect(retrying.queue).toHaveLength(1);
    expect(retrying.queue[0]).toMatchObject({ type: "incident.created", attempts: 1 });
    expect(retrying.nextAttemptAt).toBe(retrying.queue[0]?.nextAttemptAt);
    expect(retrying.nextAttemptAt).toBeGreaterThan(clock.now());
    expect(retrying.attempts[0]).toMatchObject({
      kind: "event",
      category: "http_5xx",
      httpStatus: 503,
      attempt: 1,
    });

    while ((await engine.get(db, sub.id)).deliveryStatus.active)
      await runAtNextWake(engine, db, clock, sub.id);
    const sent = endpoint.events();
    const suspended = await showDelivery(db, sub.subscriberId);
    expect(suspended).toMatchObject({
      id: sub.id,
      status: "active",
      deliveryActive: false,
      queued: 0,
      deadLetters: 1,
    });
    expect(suspended.attempts).toHaveLength(sent.length);
    expect(suspended.attempts.map((a) => a.attempt)).toEqual(sent.map((_, i) => sent.length - i));
    expect(suspended.attempts.every((a) => a.category === "http_5xx")).toBe(true);
    const [dead] = suspended.deadLetterList;
    expect(dead).toMatchObject({
      reason: "retries-exhausted",
      category: "http_5xx",
      attempts: sent.length,
      replayedAt: null,
    });
    expect(dead?.body).toBe(sent[0]?.body);
    expect(await listDeliveries(db, { withDeadLetters: true })).toHaveLength(1);

    endpoint.control.status = 200;
    const replayed = await replayDeadLetter(store, dead?.id as string, { clock: clock.now });
    expect(replayed).toMatchObject({ subscriptionId: sub.id, type: "incident.created", resumed: true });
    await engine.runDue();
    const again = endpoint.events().at(-1);
    expect(again?.body).toBe(sent[0]?.body);
    expect(again?.headers["x-mcp-signature"]).toBeDefined();
    const after = await showDelivery(db, sub.id);
    expect(after).toMatchObject({ deliveryActive: true, queued: 0, deadLetters: 0, lastError: null });
    expect(after.deadLetterList[0]?.replayedAt).toBe(clock.now());
    await expect(replayDeadLetter(store, dead?.id as string)).rejects.toMatchObject({
      code: "ERR_DELIVERY_ALREADY_REPLAYED",
    });
    await expect(replayDeadLetter(store, "dlq_nope")).rejects.toMatchObject({
      code: "ERR_DELIVERY_UNKNOWN_DEAD_LETTER",
    });
  });

  it("an MCP event refused with 413 is dead-lettered on a live subscription and can be replayed; the same webhook-id comes again", async () => {
    const clock = fakeClock();
    const { engine, db, store } = await engineOn(fixture.db, clock.now);
    // 413 drops one event under MCP Events; the push profile retries it (issue 16 item 13).
    const sub = await activeSubscription(engine, db, clock, endpoint.url, {
      channel: "mcp",
      subscriberId: "0b7c3e1e-4f0a-4d55-9b39-3d5f4b8f2a11",
    });
    endpoint.control.script = [413];
    await store.transaction((trx) =>
      engine.enqueue(trx, sub.id, { type: "incident.created", eventId: "evt_413", data: {} }),
    );
    await engine.runDue();
    const log = await showDelivery(db, sub.id);
    expect(log.status).toBe("active");
    expect(log.deadLetterList).toHaveLength(1);
    expect(log.deadLetterList[0]).toMatchObject({ reason: "too-large", category: "http_4xx", attempts: 1 });
    const first = endpoint.events()[0];
    await replayDeadLetter(store, log.deadLetterList[0]?.id as string, { clock: clock.now });
    await engine.runDue();
    const second = endpoint.events()[1];
    expect(second?.headers["webhook-id"]).toBe(first?.headers["webhook-id"]);
    expect(second?.body).toBe(first?.body);
    expect((await showDelivery(db, sub.id)).lastDeliveryAt).toBe(clock.now());
  });

  it("a push subscription whose retries are exhausted has ended: its dead letter is shown, the replay is refused", async () => {
    const clock = fakeClock();
    const { engine, db, store } = await engineOn(fixture.db, clock.now);
    const sub = await activeSubscription(engine, db, clock, endpoint.url);
    endpoint.control.status = 500;
    await store.transaction((trx) =>
      engine.enqueue(trx, sub.id, { type: "intent.status.changed", data: {} }),
    );
    await engine.runDue();
    while ((await engine.get(db, sub.id)).status !== "ended") await runAtNextWake(engine, db, clock, sub.id);
    const log = await showDelivery(db, sub.id);
    expect(log).toMatchObject({ status: "ended", endedReason: "delivery-failed", deadLetters: 1 });
    expect(log.deadLetterList[0]).toMatchObject({
      reason: "retries-exhausted",
      type: "intent.status.changed",
    });
    await expect(replayDeadLetter(store, log.deadLetterList[0]?.id as string)).rejects.toMatchObject({
      code: "ERR_DELIVERY_SUBSCRIPTION_ENDED",
    });
    // Refused without a trace: still not replayed, nothing queued.
    expect((await showDelivery(db, sub.id)).deadLetterList[0]?.replayedAt).toBeNull();
    expect((await showDelivery(db, sub.id)).queued).toBe(0);
  });

  it("failed challenges are logged; the log keeps no secret or endpoint; purging the subscription removes its log", async () => {
    const clock = fakeClock();
    const { engine, db } = await engineOn(fixture.db, clock.now, { purgeAfterMs: 0 });
    endpoint.control.challenge = "wrong";
    const secret = newSecret();
    const sub = await engine.subscribe(db, {
      channel: "push",
      url: endpoint.url,
      secret,
      expiresAt: clock.now() + 30 * DAY,
      refreshBefore: clock.now() + 27 * DAY,
      requiresApproval: false,
    });
    await engine.runDue();
    const log = await showDelivery(db, sub.id);
    expect(log.attempts[0]).toMatchObject({
      kind: "challenge",
      type: "subscription.verification",
      category: "wrong_answer",
      httpStatus: 200,
      attempt: 1,
    });
    expect(log.nextAttemptAt).toBeGreaterThan(clock.now());
    const shown = JSON.stringify([log, await listDeliveries(db)]);
    for (const leak of [secret, secret.slice(6), endpoint.url, new URL(endpoint.url).host, "/hooks/"]) {
      expect(shown).not.toContain(leak);
    }
    while ((await runAtNextWake(engine, db, clock, sub.id)) !== null) {
      /* three challenges fail, the subscription ends and is purged at once */
    }
    const rows = await db
      .selectFrom("delivery_attempt_log")
      .selectAll()
      .where("subscription_id", "=", sub.id)
      .execute();
    expect(rows).toHaveLength(0);
    await expect(showDelivery(db, sub.id)).rejects.toMatchObject({
      code: "ERR_DELIVERY_UNKNOWN_SUBSCRIPTION",
    });
  });
});
