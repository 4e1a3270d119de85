/**
 * The manage page linked from every e-mail: the intent and its delivered matches, newest first,
 * and withdrawal in one action that takes effect immediately.
 */
import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { activeIntent, basicIntent, holderOn, recordMatch, refusal, T0 } from "../support/intents-harness.js";

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  it("shows the intent and its matches, newest first, as offers", async () => {
    const h = await holderOn(engine);
    const flow = await activeIntent(h);
    // Another person's intent for another car: its offers are not this intent's matches.
    const other = await activeIntent(
      h,
      "b@example.sk",
      basicIntent({ criteria: { category: "vehicles", make: "Kia", model: "Ceed" } }),
    );
    await recordMatch(h, flow.intent.id, {
      id: "off_1",
      title: "Octavia 2017",
      price: 12_000,
      at: T0 + 1000,
    });
    await recordMatch(h, flow.intent.id, {
      id: "off_2",
      title: "Octavia 2019",
      price: 14_500,
      at: T0 + 3000,
    });
    await recordMatch(h, flow.intent.id, {
      id: "off_3",
      title: "Octavia 2018",
      price: 13_000,
      at: T0 + 2000,
    });
    await recordMatch(h, other.intent.id, { id: "off_4", title: "Not yours", price: 9_000, at: T0 + 4000 });

    const view = await h.consent.manageView(flow.manageToken);
    expect(view.intent).toEqual(flow.intent);
    expect(view.matches.map((m) => m.offer.title)).toEqual(["Octavia 2019", "Octavia 2018", "Octavia 2017"]);
    expect(view.matches[0]).toEqual({
      deliveredAt: new Date(T0 + 3000).toISOString(),
      offer: {
        id: "off_2",
        source: { kind: "catalogue", ref: "ref-off_2", seller: "Autobazar Test" },
        title: "Octavia 2019",
        category: "vehicles",
        price: { amount: 14_500, currency: "EUR" },
        location: { country: "SK", region: "SK-BL" },
        url: "https://catalogue.example.sk/off_2",
        attributes: { make: "Škoda", model: "Octavia", year: 2019, fuel: "diesel", mileageKm: 90_000 },
        publishedAt: new Date(T0 + 3000 - 24 * 60 * 60 * 1000).toISOString(),
      },
    });
    expect(JSON.stringify(view)).not.toContain("a@example.sk");
  });

  it("withdraws in one action, immediately, and stays readable", async () => {
    const h = await holderOn(engine);
    const flow = await activeIntent(h);
    const intent = await h.consent.withdrawByManageToken(flow.manageToken);
    expect(intent.status).toBe("withdrawn");
    expect((await h.consent.manageView(flow.manageToken)).intent.status).toBe("withdrawn");
    const principal = await h.intents.principalForCode(flow.published.intentCode);
    expect((await h.intents.get(principal as never)).status).toBe("withdrawn");
    // Again: idempotent, no second notice, no second hook.
    expect((await h.consent.withdrawByManageToken(flow.manageToken)).status).toBe("withdrawn");
    expect(h.calls.filter((c) => c.hook === "onEnded")).toEqual([
      { hook: "onEnded", intentId: flow.intent.id, reason: "withdrawn" },
    ]);
    expect(
      (await h.mailbox.listMailbox()).filter((m) => m.subject === "Your intent was withdrawn"),
    ).toHaveLength(1);
  });

  it("refuses unknown and malformed manage links", async () => {
    const h = await holderOn(engine);
    for (const token of ["C".repeat(32), "", "x/../y", `${"D".repeat(65)}`]) {
      expect((await refusal(h.consent.manageView(token))).code).toBe("ERR_HOLDER_NOT_FOUND");
      expect((await refusal(h.consent.withdrawByManageToken(token))).code).toBe("ERR_HOLDER_NOT_FOUND");
    }
  });

  it("a confirm or consent token is not a manage token", async () => {
    const h = await holderOn(engine);
    const flow = await activeIntent(h);
    expect((await refusal(h.consent.manageView(flow.confirmToken))).code).toBe("ERR_HOLDER_NOT_FOUND");
    expect((await refusal(h.consent.withdrawByManageToken(flow.consentToken))).code).toBe(
      "ERR_HOLDER_NOT_FOUND",
    );
    expect((await h.consent.manageView(flow.manageToken)).intent.status).toBe("active");
  });
});
