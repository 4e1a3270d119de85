// Binding rule 1: a tool result never includes buyer contact, pseudonyms of other buyers, or any
// hidden limit (consent-link rule 4: only hasHiddenLimit). Canaries are planted (a contact, a
// hidden limit, the codes and page tokens) and every tool's result, text and structured, is
// searched for them, as are the log lines (rule 7).
import { forEachEngine } from "@doorbell/store/testing";
import type { Client } from "@modelcontextprotocol/client";
import type { CallToolResult } from "@modelcontextprotocol/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  activeIntent,
  basicPublish,
  call,
  MINUTE,
  octavia,
  type Published,
  startHolder,
  type TestHolder,
  tokenOf,
} from "../support/mcp-harness.js";

const CONTACT_A = "canary.buyer-a.7c1f@example.sk";
const CONTACT_B = "canary.buyer-b.3e9d@example.sk";
const HIDDEN_LIMIT = 14_321.57;

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let h: TestHolder;
  let agent: Client;
  let seller: Client;
  let a: Published;
  let b: Published;
  const results: { tool: string; result: CallToolResult }[] = [];

  const record = async (client: Client, tool: string, args: Record<string, unknown>) => {
    const result = await call(client, tool, args);
    results.push({ tool, result });
    return result;
  };

  beforeAll(async () => {
    h = await startHolder(engine, { config: { demandThreshold: 1 } });
    agent = await h.connect("buyer-agent");
    seller = await h.connect("seller-agent");
    a = await activeIntent(
      h,
      agent,
      CONTACT_A,
      basicPublish({ hiddenLimit: HIDDEN_LIMIT, visibility: "pseudonymous" }),
    );
    b = await activeIntent(
      h,
      agent,
      CONTACT_B,
      basicPublish({ visibility: "pseudonymous", hiddenLimit: 9_999 }),
    );
    h.clock.advance(MINUTE);
    await h.services.offers.importCatalogue([octavia(), octavia({ title: "Škoda Octavia 1.6 TDI Style" })]);

    const reply = {
      inReplyTo: a.intent.id,
      source: { kind: "reply", ref: "offer-77", seller: "Autobazár Pezinok" },
      title: "Škoda Octavia Combi 2.0 TDI for you",
      category: "vehicles",
      price: { amount: 12_500, currency: "EUR" },
      location: { country: "SK", region: "SK-BL" },
      attributes: { make: "Škoda", model: "Octavia", year: 2020, mileageKm: 80_000, fuel: "diesel" },
    };
    for (const code of [a.intentCode, b.intentCode]) {
      await record(agent, "intent_get_intent", { intentCode: code });
      await record(agent, "intent_list_matches", { intentCode: code });
    }
    await record(seller, "intent_submit_offer", reply);
    await record(seller, "intent_submit_offer", { ...reply, inReplyTo: b.intent.id });
    await record(agent, "intent_list_matches", { intentCode: a.intentCode });
    await record(agent, "intent_update_intent", {
      id: a.intent.id,
      intentCode: a.intentCode,
      hiddenLimit: 1,
    });
    await record(seller, "intent_search_offers", { statement: "Octavia" });
    await record(seller, "intent_demand_summary", {
      category: "vehicles",
      country: "SK",
      region: "SK-BL",
      budgetBand: "EUR-10000-20000",
    });
    await record(agent, "intent_get_intent", { intentCode: a.intentCode, id: b.intent.id });
    await record(agent, "intent_withdraw_intent", { intentCode: b.intentCode });
    await record(agent, "intent_get_intent", { intentCode: b.intentCode });
  });
  afterAll(async () => {
    await h?.close();
  });

  /** Everything secret about the buyers that the holder knows. */
  async function canaries(): Promise<Record<string, string>> {
    const rows = await h.ctx.store.db.selectFrom("holder_intents").select(["id", "pseudonym"]).execute();
    const found: Record<string, string> = {
      contactA: CONTACT_A,
      contactB: CONTACT_B,
      hiddenLimit: String(HIDDEN_LIMIT),
      hiddenLimitDigits: "14321",
      codeA: a.intentCode,
      codeB: b.intentCode,
      consentTokenA: tokenOf(a.consentUrl),
      consentTokenB: tokenOf(b.consentUrl),
    };
    for (const row of rows) if (row.pseudonym !== null) found[`pseudonym ${row.id}`] = row.pseudonym;
    for (const mail of await h.ctx.mailbox.listMailbox({ limit: 100 })) {
      for (const token of mail.text.match(/\/(?:confirm|manage)\/[0-9A-Za-z]+/g) ?? []) {
        found[`page token ${token.slice(0, 9)}`] = token.slice(token.lastIndexOf("/") + 1);
      }
    }
    return found;
  }

  it("planted pseudonyms and page tokens exist, so the search below can fail", async () => {
    const planted = await canaries();
    expect(Object.keys(planted).filter((key) => key.startsWith("pseudonym")).length).toBeGreaterThanOrEqual(
      2,
    );
    expect(Object.keys(planted).filter((key) => key.startsWith("page token")).length).toBeGreaterThanOrEqual(
      2,
    );
    expect(results.length).toBe(13);
    // The reply to A was delivered, so A's list is not trivially empty.
    const lastList = results.filter((r) => r.tool === "intent_list_matches").at(-1)?.result;
    expect(
      (lastList?.structuredContent as { matches: unknown[] } | undefined)?.matches.length,
    ).toBeGreaterThanOrEqual(3);
  });

  it("no tool result carries a contact, a hidden limit, a pseudonym, a page token or another intent's code", async () => {
    const planted = await canaries();
    for (const { tool, result } of results) {
      const wire = JSON.stringify(result);
      for (const [name, value] of Object.entries(planted)) {
        expect(wire.includes(value), `${tool} result contains ${name}`).toBe(false);
      }
      expect(wire).not.toMatch(/"hiddenLimit"|"contact|"email"|"pseudonym"/);
    }
  });

  it("shows only hasHiddenLimit (consent-link rule 4)", () => {
    const got = results.find((r) => r.tool === "intent_get_intent" && !r.result.isError)?.result
      .structuredContent;
    expect(got).toMatchObject({ id: a.intent.id, hasHiddenLimit: true });
    expect(Object.keys(got ?? {})).not.toContain("hiddenLimit");
  });

  it("answers a seller's reply with { accepted } only", () => {
    for (const { result } of results.filter((r) => r.tool === "intent_submit_offer")) {
      expect(result.isError).toBeFalsy();
      expect(Object.keys(result.structuredContent ?? {})).toEqual(["accepted"]);
    }
  });

  it("keeps the canaries out of the log lines too (consent-link rule 7)", async () => {
    const planted = await canaries();
    const log = h.ctx.logLines.join("\n");
    expect(log.length).toBeGreaterThan(0);
    for (const [name, value] of Object.entries(planted)) {
      expect(log.includes(value), `log contains ${name}`).toBe(false);
    }
    // Nor the statement (rule 7: metering never records it).
    expect(log).not.toContain(String(basicPublish().statement));
  });
});
