import { forEachEngine } from "@doorbell/store/testing";
import { createStandardVerifier } from "@doorbell/webhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  activeSubscription,
  DAY,
  endpointForSuite,
  engineOn,
  fakeClock,
  HOUR,
  newSecret,
  T0,
} from "./harness.js";

// Push profile §4.1: renewal with a new secret replaces the old one only after a successful
// challenge; during the change deliveries carry two signatures (§5.1 "MAY send two signatures").
forEachEngine({ describe, beforeAll, afterAll }, (fixture) => {
  const endpoint = endpointForSuite();

  it("challenges with the new secret, then signs with both for the overlap, then with the new one", async () => {
    const clock = fakeClock();
    const { engine, db, store } = await engineOn(fixture.db, clock.now, { secretOverlapMs: HOUR });
    const sub = await activeSubscription(engine, db, clock, endpoint.url);
    const next = newSecret();
    const send = () =>
      store.transaction((trx) => engine.enqueue(trx, sub.id, { type: "intent.status.changed", data: {} }));
    const only = (secret: string) => createStandardVerifier({ secrets: [secret], clock: clock.now });

    await engine.renew(db, sub.id, { expiresAt: T0 + 20 * DAY, refreshBefore: T0 + 19 * DAY, secret: next });
    await engine.runDue();
    const challenge = endpoint.challenges().at(-1);
    expect(
      only(next).verify(challenge?.headers as Record<string, string>, challenge?.body as string).version,
    ).toBe("v1");
    expect(() =>
      only(sub.secret).verify(challenge?.headers as Record<string, string>, challenge?.body as string),
    ).toThrow();

    await send();
    await engine.runDue();
    const during = endpoint.events().at(-1);
    expect(String(during?.headers["webhook-signature"]).split(" ")).toHaveLength(2);
    for (const secret of [next, sub.secret]) {
      expect(
        only(secret).verify(during?.headers as Record<string, string>, during?.body as string).version,
      ).toBe("v1");
    }

    clock.advance(HOUR + 1);
    await send();
    await engine.runDue();
    const after = endpoint.events().at(-1);
    expect(String(after?.headers["webhook-signature"]).split(" ")).toHaveLength(1);
    expect(only(next).verify(after?.headers as Record<string, string>, after?.body as string).version).toBe(
      "v1",
    );
  });

  it("a renewal with the secret already in force signs once, and keeps a rotation's overlap as it was", async () => {
    const clock = fakeClock();
    const { engine, db, store } = await engineOn(fixture.db, clock.now, { secretOverlapMs: HOUR });
    const sub = await activeSubscription(engine, db, clock, endpoint.url);
    const send = async () => {
      await store.transaction((trx) =>
        engine.enqueue(trx, sub.id, { type: "intent.status.changed", data: {} }),
      );
      await engine.runDue();
      const sent = endpoint.events().at(-1);
      return { headers: sent?.headers as Record<string, string>, body: sent?.body as string };
    };
    const signatures = (sent: { headers: Record<string, string> }) =>
      String(sent.headers["webhook-signature"]).split(" ");
    const verifies = (secret: string, sent: { headers: Record<string, string>; body: string }) =>
      createStandardVerifier({ secrets: [secret], clock: clock.now }).verify(sent.headers, sent.body).version;
    const renew = async (secret: string) => {
      await engine.renew(db, sub.id, {
        expiresAt: clock.now() + 20 * DAY,
        refreshBefore: clock.now() + 19 * DAY,
        secret,
      });
      await engine.runDue();
      expect(await engine.get(db, sub.id)).toMatchObject({ status: "active" });
    };

    await renew(sub.secret);
    const same = await send();
    expect(signatures(same)).toHaveLength(1);
    expect(verifies(sub.secret, same)).toBe("v1");

    // A rotation, then the new secret sent again during its overlap: the old one still signs beside it.
    const next = newSecret();
    await renew(next);
    clock.advance(HOUR / 2);
    await renew(next);
    const during = await send();
    expect(new Set(signatures(during)).size).toBe(2);
    expect(verifies(next, during)).toBe("v1");
    expect(verifies(sub.secret, during)).toBe("v1");
    clock.advance(HOUR / 2 + 1);
    expect(signatures(await send())).toHaveLength(1);
  });

  it("a new secret that fails its challenge three times ends the subscription", async () => {
    const clock = fakeClock();
    const { engine, db } = await engineOn(fixture.db, clock.now, { challengeDelaysMs: [1000, 1000] });
    const sub = await activeSubscription(engine, db, clock, endpoint.url);
    endpoint.control.challenge = "wrong";
    await engine.renew(db, sub.id, {
      expiresAt: T0 + 20 * DAY,
      refreshBefore: T0 + 19 * DAY,
      secret: newSecret(),
    });
    for (let i = 0; i < 3; i++) {
      await engine.runDue();
      clock.advance(1000);
    }
    expect(await engine.get(db, sub.id)).toMatchObject({
      status: "ended",
      endedReason: "verification-failed",
    });
  });
});
