// Push profile §5.3 at the agent: `data` has exactly the fields of its event type. A doorbell
// carrying anything more (an offer URL, a code, a title) is refused with 400 and a message that
// names the field — after its signature verified, so only the holder's own mistake gets the detail.
import { describe, expect, it } from "vitest";
import { doorbell, newWebhookId, ring } from "./doorbell-sender.js";
import { listenerPerCase, SUBSCRIPTION_ID } from "./listener-fixture.js";

const serve = listenerPerCase();

const delivered = {
  subscriptionId: SUBSCRIPTION_ID,
  newMatches: 2,
  latestDeliveredAt: "2026-10-27T13:58:12Z",
};

describe("push rule 5.3: a doorbell, not a letter", () => {
  it.each([
    ["intent.matches.delivered", delivered],
    ["intent.status.changed", { subscriptionId: SUBSCRIPTION_ID, status: "withdrawn" }],
    ["subscription.ended", { subscriptionId: SUBSCRIPTION_ID, reason: "delivery-failed" }],
  ])("accepts %s with exactly its fields", async (type, data) => {
    const l = await serve();
    const answer = await ring(l.url, { secrets: [l.secret], body: doorbell(type, data) });
    expect(answer.status).toBe(200);
    expect(l.received[0]?.doorbell).toMatchObject({ type, data });
  });

  it.each([
    ["an offer URL", { ...delivered, offerUrl: "https://cars.example.sk/octavia" }, /"offerUrl"/],
    ["the intentCode", { ...delivered, intentCode: "ic_secret" }, /"intentCode"/],
    ["a title and a price", { ...delivered, title: "Octavia", price: 13_900 }, /"title", "price"/],
  ])("refuses data carrying %s with 400 naming the field", async (_what, data, named) => {
    const l = await serve();
    const id = newWebhookId();
    const answer = await ring(l.url, {
      secrets: [l.secret],
      body: doorbell("intent.matches.delivered", data),
      id,
    });
    expect(answer.status).toBe(400);
    expect(answer.json.error).toBe("ERR_AGENT_DOORBELL_INVALID");
    expect(answer.json.message).toMatch(named);
    expect(answer.json.message).toMatch(/exactly subscriptionId, newMatches, latestDeliveredAt.*§5\.3/);
    expect(l.received).toHaveLength(0);
    // Not remembered as processed: the same id is judged again (and refused again).
    expect(l.box.state.seen[id]).toBeUndefined();
    expect(
      (await ring(l.url, { secrets: [l.secret], body: doorbell("intent.matches.delivered", data), id }))
        .status,
    ).toBe(400);
  });

  it.each([
    [
      "a field beside data",
      {
        ...doorbell("intent.status.changed", { subscriptionId: SUBSCRIPTION_ID, status: "active" }),
        offer: {},
      },
      /undeclared field "offer"/,
    ],
    [
      "an unknown type",
      doorbell("intent.offer.sent", { subscriptionId: SUBSCRIPTION_ID }),
      /unknown doorbell type "intent.offer.sent"/,
    ],
    [
      "another spec version",
      {
        ...doorbell("intent.status.changed", { subscriptionId: SUBSCRIPTION_ID, status: "active" }),
        specVersion: "0.3",
      },
      /specVersion/,
    ],
    [
      "a missing field",
      doorbell("intent.matches.delivered", { subscriptionId: SUBSCRIPTION_ID, newMatches: 1 }),
      /latestDeliveredAt/,
    ],
    [
      "another subscription's id",
      doorbell("intent.status.changed", { subscriptionId: "sub_other", status: "active" }),
      /belongs to subscription sub_Vq8n/,
    ],
  ])("refuses %s with 400 and says what is wrong", async (_what, body, reason) => {
    const l = await serve();
    const answer = await ring(l.url, { secrets: [l.secret], body });
    expect(answer).toMatchObject({ status: 400, json: { error: "ERR_AGENT_DOORBELL_INVALID" } });
    expect(answer.json.message).toMatch(reason);
  });
});
