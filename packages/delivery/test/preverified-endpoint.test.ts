import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DAY, endpointForSuite, engineOn, fakeClock, newSecret } from "./harness.js";

// Issue 15: an endpoint verified another way (an MCP Events receiver's well-known document) is
// subscribed `preverified`: no challenge is sent and the first event goes out at once. Without the
// flag nothing changes (push-rule-2-challenge.test.ts).
forEachEngine({ describe, beforeAll, afterAll }, (fixture) => {
  const endpoint = endpointForSuite();

  it("a preverified subscription is active, sends no challenge, and delivers its first event", async () => {
    const clock = fakeClock();
    const { engine, db, store } = await engineOn(fixture.db, clock.now);
    const sub = await engine.subscribe(db, {
      channel: "mcp-standard",
      url: endpoint.url,
      secret: newSecret(),
      expiresAt: clock.now() + DAY,
      refreshBefore: clock.now() + DAY,
      requiresApproval: false,
      subscriberId: "sub_preverified",
      preverified: true,
    });
    expect(sub).toMatchObject({ status: "active", verified: true });
    await store.transaction((trx) =>
      engine.enqueue(trx, sub.id, {
        type: "order.placed",
        eventId: "order_1",
        timestamp: new Date(clock.now()).toISOString(),
        data: { item: "mug" },
      }),
    );
    await engine.runDue();
    expect(endpoint.challenges()).toHaveLength(0);
    expect(endpoint.events().map((r) => r.headers["webhook-id"])).toEqual(["order_1"]);
  });
});
