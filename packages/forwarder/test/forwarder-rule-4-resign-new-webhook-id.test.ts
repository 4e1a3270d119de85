// Push profile §7 rule 4: the forwarder verifies the holder's doorbell with its own secret (§6 rule
// 4: ±300 s, signature, replayed webhook-id), relays only data with exactly its type's fields,
// swaps in its own subscriptionId and signs a new doorbell with the agent's secret and a new
// webhook-id — nothing added, nothing merged, delayed or reordered. Rule 6: the holder's end ends
// the agent's subscription, and an agent's ended subscription makes the relay answer 410.
import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deliveryDb } from "../src/context.js";
import {
  type AgentEndpoint,
  doorbell,
  makeRelay,
  type Relay,
  ring,
  sleep,
  startAgentEndpoint,
  startForwarder,
  until,
} from "./forwarder-harness.js";

// Never called: these tests ring the relay directly, as a holder would.
const UNUSED_UPSTREAM = "http://127.0.0.1:9/mcp";

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let f: Awaited<ReturnType<typeof startForwarder>>;
  let agent: AgentEndpoint;
  let relay: Relay;

  beforeAll(async () => {
    f = await startForwarder(engine, UNUSED_UPSTREAM);
    agent = await startAgentEndpoint();
    relay = await makeRelay(f.forwarder, agent);
  });
  afterAll(async () => {
    await f?.close();
    await agent?.close();
  });

  const matches = (newMatches: number, at = "2026-12-01T10:00:00.000Z") =>
    doorbell("intent.matches.delivered", {
      subscriptionId: relay.holderSubscriptionId,
      newMatches,
      latestDeliveredAt: at,
    });

  it("re-signs with the agent's secret, the forwarder's subscriptionId and a new webhook-id; nothing else changes", async () => {
    const before = agent.doorbells.length;
    const body = matches(2);
    const response = await ring(f.origin, relay, body, { id: "msg_fromtheholder1" });
    expect(response.status).toBe(200);
    await until(() => agent.doorbells.length > before);
    const got = agent.doorbells[before];
    // The agent's receiver verified it with the agent's own secret, or it would not be here.
    expect(got?.id).toMatch(/^msg_/);
    expect(got?.id).not.toBe("msg_fromtheholder1");
    expect(got?.type).toBe("intent.matches.delivered");
    expect(got?.timestamp).toBe(body.timestamp);
    expect(got?.data).toEqual({
      subscriptionId: relay.id,
      newMatches: 2,
      latestDeliveredAt: body.data.latestDeliveredAt,
    });
    expect(Object.keys(got?.data ?? {})).toEqual(["subscriptionId", "newMatches", "latestDeliveredAt"]);
    expect(JSON.stringify(got)).not.toContain(relay.holderSubscriptionId);
  });

  it("does not merge or reorder: three matches doorbells in a row reach the agent as three, in order", async () => {
    const before = agent.doorbells.length;
    for (const n of [1, 2, 3]) {
      expect((await ring(f.origin, relay, matches(n, `2026-12-01T11:0${n}:00.000Z`))).status).toBe(200);
    }
    await until(() => agent.doorbells.length >= before + 3);
    await sleep(100);
    expect(agent.doorbells.slice(before).map((d) => d.data.newMatches)).toEqual([1, 2, 3]);
  });

  it("relays a status change with exactly subscriptionId and status", async () => {
    const before = agent.doorbells.length;
    const response = await ring(
      f.origin,
      relay,
      doorbell("intent.status.changed", { subscriptionId: relay.holderSubscriptionId, status: "active" }),
    );
    expect(response.status).toBe(200);
    await until(() => agent.doorbells.length > before);
    expect(agent.doorbells[before]?.data).toEqual({ subscriptionId: relay.id, status: "active" });
  });

  it("relays a replayed webhook-id once (the holder's retry after a lost answer)", async () => {
    const before = agent.doorbells.length;
    const body = matches(5);
    const first = await ring(f.origin, relay, body, { id: "msg_replayedonce01" });
    const second = await ring(f.origin, relay, body, { id: "msg_replayedonce01" });
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(await second.json()).toMatchObject({ status: "duplicate" });
    await until(() => agent.doorbells.length > before);
    await sleep(300);
    expect(agent.doorbells.length).toBe(before + 1);
  });

  it("refuses a wrong signature and a timestamp 301 s away (401) and relays nothing", async () => {
    const before = agent.doorbells.length;
    const forged = await ring(f.origin, relay, matches(1), {
      secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    });
    expect(forged.status).toBe(401);
    const old = await ring(f.origin, relay, matches(1), { timestamp: Math.floor(Date.now() / 1000) - 301 });
    expect(old.status).toBe(401);
    expect((await old.json()).error).toBe("ERR_WEBHOOK_TIMESTAMP_TOO_OLD");
    // Ahead by a few seconds more: the relay checks it later than it was signed, under a busy machine
    // by more than a second, which brings a future timestamp closer (an old one only gets older).
    const future = await ring(f.origin, relay, matches(1), {
      timestamp: Math.floor(Date.now() / 1000) + 305,
    });
    expect(future.status).toBe(401);
    await sleep(300);
    expect(agent.doorbells.length).toBe(before);
  });

  it("refuses data with a field beyond its type's (422), and unknown types, and relays nothing", async () => {
    const before = agent.doorbells.length;
    const extra = doorbell("intent.matches.delivered", {
      subscriptionId: relay.holderSubscriptionId,
      newMatches: 1,
      latestDeliveredAt: "2026-12-01T10:00:00.000Z",
      offerUrl: "https://catalogue.example/škoda",
    });
    const refused = await ring(f.origin, relay, extra);
    expect(refused.status).toBe(422);
    expect((await refused.json()).error).toBe("ERR_FORWARDER_NOT_RELAYED");
    const topLevel = { ...matches(1), intentCode: "ic_x" };
    expect((await ring(f.origin, relay, topLevel)).status).toBe(422);
    const unknown = doorbell("intent.offer.arrived", { subscriptionId: relay.holderSubscriptionId });
    expect((await ring(f.origin, relay, unknown)).status).toBe(422);
    const otherSub = doorbell("intent.status.changed", {
      subscriptionId: "sub_someoneelse0000000",
      status: "active",
    });
    expect((await ring(f.origin, relay, otherSub)).status).toBe(422);
    const zero = doorbell("intent.matches.delivered", {
      subscriptionId: relay.holderSubscriptionId,
      newMatches: 0,
      latestDeliveredAt: "2026-12-01T10:00:00.000Z",
    });
    expect((await ring(f.origin, relay, zero)).status).toBe(422);
    await sleep(300);
    expect(agent.doorbells.length).toBe(before);
  });

  it("answers the holder's challenge itself, after the signature verifies, without bothering the agent", async () => {
    const challenges = agent.control.challenges;
    const before = agent.doorbells.length;
    const challenge = "c".repeat(32);
    const body = doorbell("subscription.verification", {
      subscriptionId: relay.holderSubscriptionId,
      challenge,
    });
    const answer = await ring(f.origin, relay, body);
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ challenge });
    expect(
      (await ring(f.origin, relay, body, { secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" })).status,
    ).toBe(401);
    await sleep(200);
    expect(agent.control.challenges).toBe(challenges);
    expect(agent.doorbells.length).toBe(before);
  });

  it("an unknown relay path is 410 (the holder ends its side); a malformed one 404", async () => {
    const unknown = await ring(f.origin, { ...relay, path: "A".repeat(32) }, matches(1));
    expect(unknown.status).toBe(410);
    const malformed = await ring(f.origin, { ...relay, path: "short" }, matches(1));
    expect(malformed.status).toBe(404);
  });

  it("rule 6: the holder's subscription.ended ends the agent's with the same reason, then the relay is 410", async () => {
    const second = await startAgentEndpoint();
    try {
      const other = await makeRelay(f.forwarder, second);
      const ended = doorbell("subscription.ended", {
        subscriptionId: other.holderSubscriptionId,
        reason: "intent-withdrawn",
      });
      expect((await ring(f.origin, other, ended)).status).toBe(200);
      await until(() => second.doorbells.some((d) => d.type === "subscription.ended"));
      expect(second.doorbells.at(-1)?.data).toEqual({ subscriptionId: other.id, reason: "intent-withdrawn" });
      const sub = await f.forwarder.context.engine.get(deliveryDb(f.forwarder.context.store.db), other.id);
      expect(sub.status).toBe("ended");
      expect(sub.endedReason).toBe("intent-withdrawn");
      const after = await ring(
        f.origin,
        other,
        doorbell("intent.status.changed", {
          subscriptionId: other.holderSubscriptionId,
          status: "withdrawn",
        }),
      );
      expect(after.status).toBe(410);
    } finally {
      await second.close();
    }
  });

  it("rule 6: when the agent's endpoint answers 410 its subscription ends, and the holder's next doorbell gets 410", async () => {
    const third = await startAgentEndpoint();
    try {
      const other = await makeRelay(f.forwarder, third);
      third.control.status = 410;
      const body = doorbell("intent.status.changed", {
        subscriptionId: other.holderSubscriptionId,
        status: "active",
      });
      expect((await ring(f.origin, other, body)).status).toBe(200);
      const ctx = f.forwarder.context;
      await until(async () => (await ctx.engine.get(deliveryDb(ctx.store.db), other.id)).status === "ended");
      expect((await ring(f.origin, other, body)).status).toBe(410);
      const row = await ctx.store.db
        .selectFrom("forwarder_relays")
        .select(["status", "ended_reason"])
        .where("agent_subscription_id", "=", other.id)
        .executeTakeFirstOrThrow();
      expect(row).toEqual({ status: "ended", ended_reason: "gone" });
    } finally {
      await third.close();
    }
  });
});
