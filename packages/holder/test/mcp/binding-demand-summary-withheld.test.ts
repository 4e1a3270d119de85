// Binding, intent_demand_summary (public, no sign-in): one cell of the band grid; a cell below the
// k-anonymity threshold is withheld without a count, drafts are never counted (consent-link rule
// 1), and a cell outside the grid is refused by the schema.
import { forEachEngine } from "@doorbell/store/testing";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  activeIntent,
  basicPublish,
  ok,
  refused,
  startHolder,
  type TestHolder,
} from "../support/mcp-harness.js";

const THRESHOLD = 3;
const cell = { category: "vehicles", country: "SK", region: "SK-BL", budgetBand: "EUR-10000-20000" };

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let h: TestHolder;
  let buyer: Client;
  let seller: Client;

  beforeAll(async () => {
    h = await startHolder(engine, { config: { demandThreshold: THRESHOLD } });
    buyer = await h.connect("buyer");
    seller = await h.connect("seller");
  });
  afterAll(async () => {
    await h?.close();
  });

  it("withholds a cell below the threshold, without any count", async () => {
    for (let i = 0; i < THRESHOLD - 1; i++) await activeIntent(h, buyer, `below-${i}@example.sk`);
    const summary = await ok<Record<string, unknown>>(seller, "intent_demand_summary", cell);
    expect(summary).toMatchObject({ withheld: true, reason: "below-threshold", cell });
    expect(summary).not.toHaveProperty("activeIntents");
    expect(typeof summary.asOf).toBe("string");
  });

  it("never counts drafts, however many", async () => {
    for (let i = 0; i < 2 * THRESHOLD; i++) await ok(buyer, "intent_publish_intent", basicPublish());
    expect(await ok(seller, "intent_demand_summary", cell)).toMatchObject({ withheld: true });
  });

  it("publishes the count once the threshold is reached, for the region and the country", async () => {
    await activeIntent(h, buyer, "reaches@example.sk");
    expect(await ok(seller, "intent_demand_summary", cell)).toMatchObject({
      withheld: false,
      activeIntents: THRESHOLD,
    });
    const { region: _region, ...country } = cell;
    expect(await ok(seller, "intent_demand_summary", country)).toMatchObject({
      withheld: false,
      activeIntents: THRESHOLD,
    });
    expect(
      await ok(seller, "intent_demand_summary", { ...cell, budgetBand: "EUR-20000-50000" }),
    ).toMatchObject({
      withheld: true,
    });
  });

  it.each([
    ["an unknown band", { ...cell, budgetBand: "EUR-1-2" }],
    ["an unknown category", { ...cell, category: "boats" }],
    ["a region of another country", { ...cell, region: "CZ-10" }],
    ["an undeclared field", { ...cell, exact: true }],
  ])("refuses %s plainly", async (_what, args) => {
    const refusal = await refused(seller, "intent_demand_summary", args);
    expect(refusal.text.length).toBeGreaterThan(10);
    expect(refusal.text).not.toMatch(/\n\s+at /);
  });
});
