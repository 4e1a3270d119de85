import { forEachEngine } from "@doorbell/store/testing";
import { createStandardVerifier } from "@doorbell/webhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DAY, endpointForSuite, engineOn, fakeClock, newSecret, runAtNextWake } from "./harness.js";

// Push profile §6 rule 2 (and the MCP sketch's endpoint verification): a challenge of at least
// 128 random bits before the first event, answered 200 {"challenge": same}; three failures end it.
forEachEngine({ describe, beforeAll, afterAll }, (fixture) => {
  const endpoint = endpointForSuite();

  async function setup() {
    const clock = fakeClock();
    const { engine, db, store } = await engineOn(fixture.db, clock.now);
    const secret = newSecret();
    const sub = await engine.subscribe(db, {
      channel: "push",
      url: endpoint.url,
      secret,
      expiresAt: clock.now() + 30 * DAY,
      refreshBefore: clock.now() + 27 * DAY,
      requiresApproval: false,
    });
    await store.transaction((trx) =>
      engine.enqueue(trx, sub.id, { type: "intent.status.changed", data: {} }),
    );
    return { clock, engine, db, sub, secret };
  }

  it("the challenge is signed, carries ≥ 128 random bits, and is fresh each time", async () => {
    const { engine, secret, clock } = await setup();
    await engine.runDue();
    const [challenge] = endpoint.challenges();
    expect(challenge?.json).toMatchObject({ specVersion: "0.4", type: "subscription.verification" });
    const value = challenge?.json.data?.challenge as string;
    expect(Buffer.from(value, "base64url").length * 8).toBeGreaterThanOrEqual(128);
    const verifier = createStandardVerifier({ secrets: [secret], clock: clock.now });
    expect(
      verifier.verify(challenge?.headers as Record<string, string>, challenge?.body as string).version,
    ).toBe("v1");
    expect(endpoint.events()).toHaveLength(1);
  });

  it.each([
    ["a wrong echo", "wrong" as const],
    ["a 204", 204],
    ["a 500", 500],
  ])("three failed challenges (%s) end the subscription and no event is ever sent", async (_, answer) => {
    endpoint.control.challenge = answer;
    const { clock, engine, db, sub } = await setup();
    await engine.runDue();
    await runAtNextWake(engine, db, clock, sub.id);
    expect((await engine.get(db, sub.id)).status).toBe("pending_verification");
    await runAtNextWake(engine, db, clock, sub.id);
    const view = await engine.get(db, sub.id);
    expect(view).toMatchObject({ status: "ended", endedReason: "verification-failed" });
    expect(view.deliveryStatus.lastError).toBe("challenge_failed");
    const challenges = endpoint.challenges();
    expect(challenges).toHaveLength(3);
    expect(new Set(challenges.map((c) => c.json.data?.challenge)).size).toBe(3);
    expect(endpoint.events()).toHaveLength(0);
  });

  it("a second challenge that passes activates the subscription and releases its events", async () => {
    endpoint.control.challenge = "wrong";
    const { clock, engine, db, sub } = await setup();
    await engine.runDue();
    endpoint.control.challenge = "echo";
    await runAtNextWake(engine, db, clock, sub.id);
    expect((await engine.get(db, sub.id)).status).toBe("active");
    expect(endpoint.events()).toHaveLength(1);
  });

  it("refuses endpoints the egress policy refuses, before anything is stored", async () => {
    const clock = fakeClock();
    const { engine, db } = await engineOn(fixture.db, clock.now);
    const base = {
      channel: "push" as const,
      secret: newSecret(),
      expiresAt: clock.now() + DAY,
      refreshBefore: clock.now() + 1000,
      requiresApproval: false,
    };
    await expect(engine.subscribe(db, { ...base, url: "ftp://127.0.0.1/x" })).rejects.toThrow(
      /delivery.url is refused/,
    );
    await expect(engine.subscribe(db, { ...base, url: endpoint.url, secret: "whsec_short" })).rejects.toThrow(
      /24–64/,
    );
    await expect(
      engine.subscribe(db, { ...base, url: endpoint.url, expiresAt: clock.now() + 31 * DAY }),
    ).rejects.toThrow(/30 days/);
    await expect(
      engine.subscribe(db, { ...base, url: endpoint.url, refreshBefore: clock.now() + 2 * DAY }),
    ).rejects.toThrow(/refreshBefore/);
    expect(await db.selectFrom("delivery_subscriptions").select("id").execute()).toHaveLength(0);
  });
});
