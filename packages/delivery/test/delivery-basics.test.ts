import { forEachEngine } from "@doorbell/store/testing";
import { createStandardVerifier } from "@doorbell/webhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DAY, endpointForSuite, engineOn, fakeClock, MINUTE, newSecret } from "./harness.js";

forEachEngine({ describe, beforeAll, afterAll }, (fixture) => {
  const endpoint = endpointForSuite();

  it("challenges first, waits for approval, then delivers signed events in enqueue order", async () => {
    const clock = fakeClock();
    const { engine, db, store } = await engineOn(fixture.db, clock.now);
    const secret = newSecret();
    const sub = await engine.subscribe(db, {
      channel: "push",
      url: endpoint.url,
      secret,
      expiresAt: clock.now() + 30 * DAY,
      refreshBefore: clock.now() + 27 * DAY,
      requiresApproval: true,
    });
    expect(sub.status).toBe("pending_verification");
    await store.transaction((trx) =>
      engine.enqueue(trx, sub.id, { type: "intent.status.changed", data: { n: 0 } }),
    );
    await engine.runDue();
    expect(endpoint.challenges()).toHaveLength(1);
    expect(endpoint.events()).toHaveLength(0);
    expect((await engine.get(db, sub.id)).status).toBe("awaiting_approval");

    await engine.approve(db, sub.id);
    for (let n = 1; n <= 20; n++) {
      await store.transaction((trx) =>
        engine.enqueue(trx, sub.id, { type: "intent.status.changed", data: { n } }),
      );
    }
    await engine.runDue();
    const events = endpoint.events();
    expect(events.map((e) => e.json.data?.n)).toEqual(Array.from({ length: 21 }, (_, n) => n));
    const verifier = createStandardVerifier({ secrets: [secret], clock: clock.now });
    for (const event of events) {
      expect(verifier.verify(event.headers as Record<string, string>, event.body).version).toBe("v1");
      expect(event.json.specVersion).toBe("0.4");
    }
    const view = await engine.get(db, sub.id);
    expect(view.status).toBe("active");
    expect(view.deliveryStatus).toEqual({
      active: true,
      lastDeliveryAt: clock.now(),
      lastError: null,
      failedSince: null,
    });
  });

  it("a rolled-back transaction leaves no doorbell", async () => {
    const clock = fakeClock();
    const { engine, db, store } = await engineOn(fixture.db, clock.now);
    const before = endpoint.events().length;
    const sub = await engine.subscribe(db, {
      channel: "push",
      url: endpoint.url,
      secret: newSecret(),
      expiresAt: clock.now() + DAY,
      refreshBefore: clock.now() + 10 * MINUTE,
      requiresApproval: false,
    });
    await store
      .transaction(async (trx) => {
        await engine.enqueue(trx, sub.id, { type: "intent.status.changed", data: {} });
        throw new Error("the domain change failed");
      })
      .catch(() => {});
    await engine.runDue();
    expect(endpoint.events().length).toBe(before);
  });
});
