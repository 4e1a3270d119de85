// Push profile §6 rule 2 from the endpoint's side: the agent proves it wants doorbells only for
// subscriptions it made — the right path (a random local id), the right secret and the right
// subscriptionId — and answers 200 {"challenge": same}; anything else is refused.
import { generateSecret } from "@doorbell/webhooks";
import { describe, expect, it } from "vitest";
import { doorbell, ring } from "./doorbell-sender.js";
import { listenerPerCase, SUBSCRIPTION_ID, stateWithSubscription } from "./listener-fixture.js";

const serve = listenerPerCase();

const challenge = (subscriptionId = SUBSCRIPTION_ID) =>
  doorbell("subscription.verification", { subscriptionId, challenge: "c2VjcmV0LWNoYWxsZW5nZS0xMjhiaXRz" });

describe("push rule 2: the challenge, answered only for this agent's subscriptions", () => {
  it("echoes the challenge of its own subscription", async () => {
    const l = await serve();
    const answer = await ring(l.url, { secrets: [l.secret], body: challenge() });
    expect(answer).toEqual({ status: 200, json: { challenge: "c2VjcmV0LWNoYWxsZW5nZS0xMjhiaXRz" } });
    expect(l.received).toHaveLength(0);
  });

  it("answers while intent_subscribe_events is still running (the holder's id not known yet)", async () => {
    const l = await serve(stateWithSubscription({ subscriptionId: undefined, status: "subscribing" }));
    expect((await ring(l.url, { secrets: [l.secret], body: challenge("sub_new") })).status).toBe(200);
  });

  it("refuses a challenge naming another subscription (403)", async () => {
    const l = await serve();
    const answer = await ring(l.url, { secrets: [l.secret], body: challenge("sub_someoneElse") });
    expect(answer).toMatchObject({ status: 403, json: { error: "ERR_WEBHOOK_CHALLENGE_REFUSED" } });
  });

  it("refuses a challenge signed with a secret it did not make (401)", async () => {
    const l = await serve();
    expect((await ring(l.url, { secrets: [generateSecret()], body: challenge() })).status).toBe(401);
  });

  it("answers 404 on a path no subscription uses, and 410 for an ended subscription", async () => {
    const l = await serve(stateWithSubscription({ status: "ended", endedReason: "approval-withdrawn" }));
    const unknown = await ring(`${l.origin}/doorbell/d_unknown`, { secrets: [l.secret], body: challenge() });
    expect(unknown).toMatchObject({ status: 404, json: { error: "ERR_AGENT_UNKNOWN_ENDPOINT" } });
    const ended = await ring(l.url, { secrets: [l.secret], body: challenge() });
    expect(ended.status).toBe(410);
  });
});
