import { describe, expect, it } from "vitest";
import type { PushSubscription } from "../src/holder/results.js";
import type { LocalSubscription } from "../src/state/schema.js";
import { apply } from "../src/watch/subscriptions.js";

// A holder may send its challenge, and get it answered, before intent_subscribe_events has
// answered (a fast delivery engine does). The answer then still says awaiting_verification; the
// agent must not wait for a challenge that already came.

const subscribing = (more: Partial<LocalSubscription> = {}): LocalSubscription => ({
  localId: "d_local",
  url: "https://agent.example/doorbell/d_local",
  status: "subscribing",
  secrets: [{ secret: "whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0" }],
  ...more,
});

const answer = (approval: string): PushSubscription => ({
  specVersion: "0.4",
  type: "push-subscription",
  subscriptionId: "sub_1",
  status: "awaiting_verification",
  approval,
});

describe("a challenge answered before the subscribe answer", () => {
  it("moves on to the person's approval when one is needed", () => {
    const sub = subscribing({ provedEarly: true });
    apply(sub, answer("sent-to-verified-channel"));
    expect(sub.status).toBe("awaiting_person_approval");
    expect(sub.provedEarly).toBeUndefined();
  });

  it("is active at once when no approval is needed", () => {
    const sub = subscribing({ provedEarly: true });
    apply(sub, answer("not-required"));
    expect(sub.status).toBe("active");
  });

  it("without an early challenge, waits for it", () => {
    const sub = subscribing();
    apply(sub, answer("sent-to-verified-channel"));
    expect(sub.status).toBe("awaiting_verification");
  });
});
