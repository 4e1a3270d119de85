// Consent-link rule 4 over MCP: the intentCode stands in for sign-in for intent_get_intent,
// intent_list_matches and intent_withdraw_intent only; it never opens the contact, the hidden limit
// (only hasHiddenLimit) or a token, and it reaches its own intent only.
import { forEachEngine } from "@doorbell/store/testing";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  activeIntent,
  basicPublish,
  MINUTE,
  octavia,
  ok,
  type Published,
  refused,
  startHolder,
  stateDigest,
  type TestHolder,
} from "../support/mcp-harness.js";

const INTENT_KEYS = [
  "id",
  "status",
  "statement",
  "criteria",
  "area",
  "budget",
  "hasHiddenLimit",
  "buyBy",
  "validUntil",
  "visibility",
  "createdAt",
  "draftExpiresAt",
];

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let h: TestHolder;
  let agent: Client;
  let mine: Published;
  let other: Published;

  beforeAll(async () => {
    h = await startHolder(engine);
    agent = await h.connect();
    mine = await activeIntent(h, agent, "mine@example.sk", basicPublish({ hiddenLimit: 16_000 }));
    other = await activeIntent(h, agent, "other@example.sk");
    h.clock.advance(MINUTE);
    await h.services.offers.importCatalogue([octavia()]);
  });
  afterAll(async () => {
    await h?.close();
  });

  it("reads the intent: statement yes, contact and limit no (only hasHiddenLimit)", async () => {
    const intent = await ok<Record<string, unknown>>(agent, "intent_get_intent", {
      intentCode: mine.intentCode,
    });
    expect(intent).toMatchObject({ id: mine.intent.id, status: "active", hasHiddenLimit: true });
    expect(intent.statement).toBe(basicPublish().statement);
    for (const key of Object.keys(intent)) expect(INTENT_KEYS).toContain(key);
    expect(JSON.stringify(intent)).not.toContain("mine@example.sk");
    expect(JSON.stringify(intent)).not.toContain("16000");
  });

  it("lists the offers delivered for the intent", async () => {
    const { matches } = await ok<{ matches: { offer: { title: string } }[] }>(agent, "intent_list_matches", {
      intentCode: mine.intentCode,
    });
    expect(matches).toHaveLength(1);
    expect(matches[0]?.offer.title).toBe(octavia().title);
  });

  it("accepts the intent's own id beside the code, and refuses another intent's", async () => {
    expect(
      await ok(agent, "intent_get_intent", { intentCode: mine.intentCode, id: mine.intent.id }),
    ).toMatchObject({
      id: mine.intent.id,
    });
    const before = await stateDigest(h);
    for (const [tool, args] of [
      ["intent_get_intent", { intentCode: mine.intentCode, id: other.intent.id }],
      ["intent_list_matches", { intentCode: mine.intentCode, intent: other.intent.id }],
      ["intent_withdraw_intent", { intentCode: mine.intentCode, id: other.intent.id }],
    ] as const) {
      const refusal = await refused(agent, tool, args);
      expect(refusal.code, tool).toBe("ERR_HOLDER_FORBIDDEN");
      expect(refusal.text).toMatch(/its own intent only/);
    }
    expect(await stateDigest(h)).toBe(before);
    expect(await ok(agent, "intent_get_intent", { intentCode: other.intentCode })).toMatchObject({
      status: "active",
    });
  });

  it("cannot change an intent: intent_update_intent with a code is refused and changes nothing", async () => {
    const before = await stateDigest(h);
    const refusal = await refused(agent, "intent_update_intent", {
      id: mine.intent.id,
      intentCode: mine.intentCode,
      statement: "Something else entirely",
    });
    expect(refusal.code).toBe("ERR_HOLDER_FORBIDDEN");
    expect(refusal.text).toMatch(/rule 4/);
    expect(await stateDigest(h)).toBe(before);
  });

  it("refuses intent_update_intent without any principal, saying what is needed", async () => {
    const refusal = await refused(agent, "intent_update_intent", { id: mine.intent.id, statement: "x" });
    expect(refusal.code).toBe("ERR_HOLDER_FORBIDDEN");
    expect(refusal.text).toMatch(/intentCode/);
  });

  it("answers an unknown, a truncated and a malformed code alike (NOT_FOUND, no oracle)", async () => {
    for (const intentCode of [
      "ic_0000000000000000000000000000000000",
      mine.intentCode.slice(0, -1),
      "hello",
    ]) {
      const refusal = await refused(agent, "intent_get_intent", { intentCode });
      expect(refusal.code).toBe("ERR_HOLDER_NOT_FOUND");
      expect(refusal.text).not.toContain(intentCode);
    }
  });

  it("withdraws the intent with the code", async () => {
    expect(await ok(agent, "intent_withdraw_intent", { intentCode: other.intentCode })).toEqual({
      status: "withdrawn",
    });
  });
});
