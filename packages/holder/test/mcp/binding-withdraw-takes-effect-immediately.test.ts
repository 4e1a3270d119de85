// Binding, intent_withdraw_intent: "MUST take effect immediately". The answer is
// { status: "withdrawn" }; the very next read shows it, no offer is matched or delivered for it
// afterwards, and it leaves the demand summary at once.
import { forEachEngine } from "@doorbell/store/testing";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  activeIntent,
  MINUTE,
  octavia,
  ok,
  type Published,
  refused,
  startHolder,
  type TestHolder,
} from "../support/mcp-harness.js";

const cell = { category: "vehicles", country: "SK", region: "SK-BL", budgetBand: "EUR-10000-20000" };

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let h: TestHolder;
  let agent: Client;
  let intent: Published;

  beforeAll(async () => {
    h = await startHolder(engine, { config: { demandThreshold: 1 } });
    agent = await h.connect();
    intent = await activeIntent(h, agent, "withdraws@example.sk");
    h.clock.advance(MINUTE);
    await h.services.offers.importCatalogue([octavia()]);
  });
  afterAll(async () => {
    await h?.close();
  });

  it("is active, counted and matched before", async () => {
    expect(await ok(agent, "intent_demand_summary", cell)).toMatchObject({
      withheld: false,
      activeIntents: 1,
    });
    const { matches } = await ok<{ matches: unknown[] }>(agent, "intent_list_matches", {
      intentCode: intent.intentCode,
    });
    expect(matches).toHaveLength(1);
  });

  it("answers { status: 'withdrawn' } and the next read shows it, with no clock movement", async () => {
    expect(await ok(agent, "intent_withdraw_intent", { intentCode: intent.intentCode })).toEqual({
      status: "withdrawn",
    });
    expect(await ok(agent, "intent_get_intent", { intentCode: intent.intentCode })).toMatchObject({
      status: "withdrawn",
    });
  });

  it("leaves the demand summary at once", async () => {
    expect(await ok(agent, "intent_demand_summary", cell)).toMatchObject({ withheld: true });
  });

  it("matches no offer that arrives afterwards (already delivered ones stay readable)", async () => {
    h.clock.advance(MINUTE);
    const imported = await h.services.offers.importCatalogue([
      octavia({ title: "Škoda Octavia after withdrawal" }),
    ]);
    expect(imported.inserted).toBe(1);
    expect(imported.matched).toBe(0);
    const { matches } = await ok<{ matches: { offer: { title: string } }[] }>(agent, "intent_list_matches", {
      intentCode: intent.intentCode,
    });
    expect(matches.map((m) => m.offer.title)).toEqual([octavia().title]);
  });

  it("refuses replies to it", async () => {
    const withdrawnReply = await h.connect("seller");
    const result = await ok(withdrawnReply, "intent_submit_offer", {
      inReplyTo: intent.intent.id,
      title: "Octavia",
      category: "vehicles",
      price: { amount: 10_000, currency: "EUR" },
      location: { country: "SK" },
    });
    expect(result).toEqual({ accepted: false });
  });

  it("a second withdraw is answered plainly, never as a server error", async () => {
    const again = await agent.callTool({
      name: "intent_withdraw_intent",
      arguments: { intentCode: intent.intentCode },
    });
    if (again.isError) {
      const refusal = await refused(agent, "intent_withdraw_intent", { intentCode: intent.intentCode });
      expect(refusal.code).toMatch(/^ERR_HOLDER_(GONE|CONFLICT)$/);
    } else {
      expect(again.structuredContent).toEqual({ status: "withdrawn" });
    }
  });
});
