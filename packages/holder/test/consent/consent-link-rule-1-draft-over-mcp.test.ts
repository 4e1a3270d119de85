// Consent-link rule 1 over MCP: intent_publish_intent takes no contact data at all, and what it
// stores is a draft: nothing is delivered for it, it is not counted in any demand summary, and it
// ends within 24 hours.
import { forEachEngine } from "@doorbell/store/testing";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  basicPublish,
  confirmAsPerson,
  HOUR,
  MINUTE,
  octavia,
  ok,
  type Published,
  refused,
  startHolder,
  stateDigest,
  type TestHolder,
} from "../support/mcp-harness.js";

const cell = { category: "vehicles", country: "SK", region: "SK-BL", budgetBand: "EUR-10000-20000" };

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let h: TestHolder;
  let agent: Client;

  beforeAll(async () => {
    h = await startHolder(engine, { config: { demandThreshold: 1 } });
    agent = await h.connect();
  });
  afterAll(async () => {
    await h?.close();
  });

  it.each([
    ["email", { email: "jana@example.sk" }],
    ["phone", { phone: "+421900123456" }],
    ["name", { name: "Jana Nováková" }],
    ["contact", { contact: { email: "jana@example.sk" } }],
  ])("refuses a %s field and stores nothing", async (_field, extra) => {
    const before = await stateDigest(h);
    const refusal = await refused(agent, "intent_publish_intent", { ...basicPublish(), ...extra });
    expect(refusal.text).toMatch(/undeclared argument/);
    expect(refusal.text).toMatch(/no contact data/);
    expect(refusal.text).not.toContain("jana@example.sk");
    expect(await stateDigest(h)).toBe(before);
  });

  it("stores a draft that ends within 24 hours", async () => {
    const published = await ok<Published & { intent: { createdAt: string; draftExpiresAt: string } }>(
      agent,
      "intent_publish_intent",
      basicPublish(),
    );
    expect(published.intent.status).toBe("awaiting_consent");
    const created = Date.parse(published.intent.createdAt);
    const ends = Date.parse(published.intent.draftExpiresAt);
    expect(ends).toBeGreaterThan(created);
    expect(ends - created).toBeLessThanOrEqual(24 * HOUR);
  });

  it("delivers nothing for a draft, even when a fitting offer arrives", async () => {
    const draft = await ok<Published>(agent, "intent_publish_intent", basicPublish());
    h.clock.advance(MINUTE);
    const imported = await h.services.offers.importCatalogue([octavia()]);
    expect(imported.inserted).toBe(1);
    expect(await ok(agent, "intent_list_matches", { intentCode: draft.intentCode })).toEqual({ matches: [] });
    // The same offer does reach an intent once the person has confirmed it.
    await confirmAsPerson(h, draft, "draft.then.active@example.sk");
    const after = await ok<{ matches: unknown[] }>(agent, "intent_list_matches", {
      intentCode: draft.intentCode,
    });
    expect(after.matches.length).toBeGreaterThan(0);
  });

  it("counts no draft in a demand summary (threshold 1 here)", async () => {
    const kosice = { ...cell, region: "SK-KI" };
    const publish = basicPublish({ area: { country: "SK", region: "SK-KI" } });
    for (let i = 0; i < 3; i++) await ok(agent, "intent_publish_intent", publish);
    expect(await ok(agent, "intent_demand_summary", kosice)).toMatchObject({ withheld: true });
    const published = await ok<Published>(agent, "intent_publish_intent", publish);
    await confirmAsPerson(h, published, "counted@example.sk");
    expect(await ok(agent, "intent_demand_summary", kosice)).toMatchObject({
      withheld: false,
      activeIntents: 1,
    });
  });

  it("forgets a draft nobody confirmed after 24 hours: its code finds nothing", async () => {
    const draft = await ok<Published>(agent, "intent_publish_intent", basicPublish());
    h.clock.advance(24 * HOUR - MINUTE);
    expect(await ok(agent, "intent_get_intent", { intentCode: draft.intentCode })).toMatchObject({
      status: "awaiting_consent",
    });
    h.clock.advance(2 * MINUTE);
    const refusal = await refused(agent, "intent_get_intent", { intentCode: draft.intentCode });
    expect(refusal.code).toBe("ERR_HOLDER_NOT_FOUND");
  });
});
