// Binding, intent_submit_offer: an Offer with source.kind = "reply" and inReplyTo; { accepted }
// only, and only for pseudonymous intents. The seller never receives buyer contact; the buyer's
// agent finds the reply in intent_list_matches; catalogue search never shows it.
import { forEachEngine } from "@doorbell/store/testing";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  activeIntent,
  basicPublish,
  ok,
  type Published,
  refused,
  startHolder,
  stateDigest,
  type TestHolder,
} from "../support/mcp-harness.js";

const replyTo = (inReplyTo: string, more: Record<string, unknown> = {}) => ({
  inReplyTo,
  source: { kind: "reply", ref: "seller-ref-1", seller: "Autobazár Pezinok" },
  title: "Škoda Octavia Combi 2.0 TDI, reserved for you",
  description: "Serviced, two keys.",
  category: "vehicles",
  price: { amount: 12_900, currency: "EUR" },
  location: { country: "SK", region: "SK-BL" },
  url: "https://cars.example.sk/reply-1",
  attributes: { make: "Škoda", model: "Octavia", year: 2019, mileageKm: 90_000, fuel: "diesel" },
  ...more,
});

interface Listed {
  matches: { offer: { title: string; source: { kind: string }; inReplyTo?: string } }[];
}

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let h: TestHolder;
  let buyer: Client;
  let seller: Client;
  let pseudonymous: Published;
  let privateIntent: Published;
  let draft: Published;

  beforeAll(async () => {
    h = await startHolder(engine);
    buyer = await h.connect("buyer");
    seller = await h.connect("seller");
    pseudonymous = await activeIntent(
      h,
      buyer,
      "pseudo@example.sk",
      basicPublish({ visibility: "pseudonymous" }),
    );
    privateIntent = await activeIntent(h, buyer, "private@example.sk");
    draft = await ok<Published>(buyer, "intent_publish_intent", basicPublish({ visibility: "pseudonymous" }));
  });
  afterAll(async () => {
    await h?.close();
  });

  it("accepts a reply to a pseudonymous intent and answers { accepted: true } only", async () => {
    const result = await seller.callTool({
      name: "intent_submit_offer",
      arguments: replyTo(pseudonymous.intent.id),
    });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ accepted: true });
    expect(JSON.stringify(result)).not.toContain("pseudo@example.sk");
  });

  it("delivers the reply to that intent's agent, marked as a reply", async () => {
    const { matches } = await ok<Listed>(buyer, "intent_list_matches", {
      intentCode: pseudonymous.intentCode,
    });
    expect(matches).toHaveLength(1);
    expect(matches[0]?.offer).toMatchObject({ source: { kind: "reply" }, inReplyTo: pseudonymous.intent.id });
  });

  it("accepts a reply without source (it is a reply by definition)", async () => {
    const { source: _source, ...bare } = replyTo(pseudonymous.intent.id, {
      title: "Another Octavia for you",
    });
    expect(await ok(seller, "intent_submit_offer", bare)).toEqual({ accepted: true });
  });

  it.each([
    ["a private intent", () => privateIntent.intent.id],
    ["a draft", () => draft.intent.id],
    ["an unknown intent", () => "int_does_not_exist"],
  ])("does not accept a reply to %s, and says no more than that", async (_what, id) => {
    const result = await seller.callTool({ name: "intent_submit_offer", arguments: replyTo(id()) });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ accepted: false });
  });

  it("keeps replies out of the catalogue search and out of other intents' matches", async () => {
    const { offers } = await ok<{ offers: { source: { kind: string } }[] }>(seller, "intent_search_offers", {
      statement: "Octavia",
    });
    for (const offer of offers) expect(offer.source.kind).toBe("catalogue");
    expect(await ok(buyer, "intent_list_matches", { intentCode: privateIntent.intentCode })).toEqual({
      matches: [],
    });
  });

  it.each([
    ["source.kind catalogue", { source: { kind: "catalogue", ref: "x" } }],
    ["a buyer contact field", { buyerEmail: "x@example.sk" }],
    ["a javascript: url", { url: "javascript:alert(1)" }],
    ["a negative price", { price: { amount: -1, currency: "EUR" } }],
  ])("refuses %s and stores nothing", async (_what, extra) => {
    const before = await stateDigest(h);
    const refusal = await refused(seller, "intent_submit_offer", replyTo(pseudonymous.intent.id, extra));
    expect(refusal.text.length).toBeGreaterThan(10);
    expect(await stateDigest(h)).toBe(before);
  });
});
