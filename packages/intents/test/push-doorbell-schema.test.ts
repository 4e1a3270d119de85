// Push profile §5.3, by schema: a doorbell carries exactly the fields of its type. A body with a
// URL, a code, a price, an offer, a statement or any other extra member is invalid, and the holder
// refuses to queue (so to sign) one (`checkedDoorbell`). The published schemas compile under
// JSON Schema 2020-12 (Ajv2020, strict).

import { describe, expect, it } from "vitest";
import { checkedDoorbell, notificationProblem, subscriptionProblem } from "../src/index.js";

const SUB = "sub_Vq8nR3kX0bT5wLz2Hc7Ym4Pd";
const doorbell = (type: string, data: Record<string, unknown>) => ({
  specVersion: "0.4",
  type,
  timestamp: "2026-10-27T14:00:00Z",
  data,
});
const matches = { subscriptionId: SUB, newMatches: 2, latestDeliveredAt: "2026-10-27T13:58:12Z" };

describe("the push notification schema (§5.1–5.3)", () => {
  it("accepts the §5.1 example and one body of each event type", () => {
    expect(notificationProblem(doorbell("intent.matches.delivered", matches))).toBeUndefined();
    expect(
      notificationProblem(doorbell("intent.status.changed", { subscriptionId: SUB, status: "withdrawn" })),
    ).toBeUndefined();
    expect(
      notificationProblem(
        doorbell("subscription.verification", { subscriptionId: SUB, challenge: "a".repeat(32) }),
      ),
    ).toBeUndefined();
    expect(
      notificationProblem(doorbell("subscription.ended", { subscriptionId: SUB, reason: "delivery-failed" })),
    ).toBeUndefined();
  });

  const leaks: [string, Record<string, unknown>][] = [
    ["an offer URL", { url: "https://cars.example.sk/octavia" }],
    ["an intentCode", { intentCode: "ic_0123456789abcdefghijklmnopqrstuv" }],
    ["a price", { price: { amount: 13900, currency: "EUR" } }],
    ["an offer", { offer: { title: "Škoda Octavia", price: 13900 } }],
    ["a statement", { statement: "A Škoda Octavia near Bratislava" }],
    ["a title", { title: "Škoda Octavia" }],
    ["a contact", { email: "person@example.sk" }],
    ["a pseudonym", { pseudonym: "buyer-abc" }],
    ["whether a hidden limit exists", { hasHiddenLimit: true }],
  ];
  for (const [what, extra] of leaks) {
    it(`refuses a matches doorbell carrying ${what}`, () => {
      expect(notificationProblem(doorbell("intent.matches.delivered", { ...matches, ...extra }))).toMatch(
        /additional properties/,
      );
      expect(() =>
        checkedDoorbell("intent.matches.delivered", "2026-10-27T14:00:00Z", { ...matches, ...extra }),
      ).toThrow(/refused before signing/);
    });
  }

  it("refuses a code smuggled into a field's value, an unknown type and a member beside data", () => {
    expect(
      notificationProblem(
        doorbell("intent.matches.delivered", { ...matches, subscriptionId: "https://x.example/ic_abc" }),
      ),
    ).toMatch(/pattern/);
    expect(
      notificationProblem(doorbell("intent.matches.delivered", { ...matches, newMatches: "2" })),
    ).toBeDefined();
    expect(
      notificationProblem(doorbell("intent.status.changed", { subscriptionId: SUB, status: "https://x" })),
    ).toBeDefined();
    expect(
      notificationProblem(doorbell("subscription.ended", { subscriptionId: SUB, reason: "see https://x" })),
    ).toBeDefined();
    expect(notificationProblem(doorbell("intent.offer.sent", matches))).toBeDefined();
    expect(
      notificationProblem({ ...doorbell("intent.matches.delivered", matches), link: "https://x" }),
    ).toMatch(/additional properties/);
    expect(
      notificationProblem(doorbell("intent.matches.delivered", { subscriptionId: SUB, newMatches: 1 })),
    ).toMatch(/latestDeliveredAt/);
  });
});

describe("the push-subscription schema (§9)", () => {
  const example = {
    specVersion: "0.4",
    type: "push-subscription",
    subscriptionId: SUB,
    status: "awaiting_person_approval",
    approval: "sent-to-verified-channel",
    events: ["intent.matches.delivered", "intent.status.changed"],
    expiresAt: "2026-11-26T14:00:00Z",
    refreshBefore: "2026-11-23T14:00:00Z",
  };

  it("accepts the §9 example and refuses a url or secret in the answer", () => {
    expect(subscriptionProblem(example)).toBeUndefined();
    expect(subscriptionProblem({ ...example, url: "https://agent.example/hook" })).toMatch(
      /additional properties/,
    );
    expect(subscriptionProblem({ ...example, secret: "whsec_abc" })).toMatch(/additional properties/);
    expect(subscriptionProblem({ ...example, events: [] })).toBeDefined();
  });
});
