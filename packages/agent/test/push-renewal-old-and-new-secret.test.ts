// Push profile §4.1 renewal: a new secret replaces the old one, but doorbells already signed (and
// retried for up to 24 h, rule 5) with the old one must still verify for a while; after the grace
// time only the new secret works. Also a holder signing with both at once (§5.1) verifies.
import { generateSecret } from "@doorbell/webhooks";
import { describe, expect, it } from "vitest";
import { doorbell, ring } from "./doorbell-sender.js";
import { listenerPerCase, SUBSCRIPTION_ID, stateWithSubscription } from "./listener-fixture.js";

const serve = listenerPerCase();

const body = () => doorbell("intent.status.changed", { subscriptionId: SUBSCRIPTION_ID, status: "active" });

describe("renewal: old and new secret", () => {
  it("accepts both during the grace time and only the new one after it", async () => {
    let clock = Date.now();
    const fresh = generateSecret();
    const old = generateSecret();
    const state = stateWithSubscription({
      secrets: [{ secret: fresh }, { secret: old, until: clock + 60_000 }],
    });
    const l = await serve(state, () => clock);
    expect((await ring(l.url, { secrets: [fresh], body: body() })).status).toBe(200);
    expect((await ring(l.url, { secrets: [old], body: body() })).status).toBe(200);
    expect((await ring(l.url, { secrets: [old, fresh], body: body() })).status).toBe(200);

    clock += 60_001;
    const ts = Math.floor(clock / 1000);
    expect((await ring(l.url, { secrets: [old], body: body(), timestamp: ts })).status).toBe(401);
    expect((await ring(l.url, { secrets: [fresh], body: body(), timestamp: ts })).status).toBe(200);
  });
});
