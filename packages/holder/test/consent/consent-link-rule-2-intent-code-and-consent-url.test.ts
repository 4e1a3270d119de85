// Consent-link rule 2 over MCP: the result carries an intentCode (a secret of at least 128 random
// bits) and a consentUrl on the holder's own domain; the code is stored only as a keyed hash.
import { forEachEngine } from "@doorbell/store/testing";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  basicPublish,
  ok,
  type Published,
  startHolder,
  type TestHolder,
  tokenOf,
} from "../support/mcp-harness.js";

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let h: TestHolder;
  let agent: Client;
  const published: Published[] = [];

  beforeAll(async () => {
    h = await startHolder(engine);
    agent = await h.connect();
    for (let i = 0; i < 50; i++)
      published.push(await ok<Published>(agent, "intent_publish_intent", basicPublish()));
  });
  afterAll(async () => {
    await h?.close();
  });

  it("returns an intentCode of at least 128 random bits, different every time", () => {
    for (const { intentCode } of published) {
      const match = /^ic_([0-9A-Za-z]+)$/.exec(intentCode);
      expect(match, intentCode.slice(0, 3)).not.toBeNull();
      const bits = (match?.[1]?.length ?? 0) * Math.log2(62);
      expect(bits).toBeGreaterThanOrEqual(128);
    }
    expect(new Set(published.map((p) => p.intentCode)).size).toBe(published.length);
  });

  it("returns a consentUrl on the holder's own origin", () => {
    for (const { consentUrl } of published) {
      expect(consentUrl.startsWith(`${h.ctx.config.publicUrl}/consent/`)).toBe(true);
      expect(new URL(consentUrl).origin).toBe(new URL(h.ctx.config.publicUrl).origin);
    }
  });

  it("tells the agent in words to give the link to the person and not to open it", async () => {
    const result = await agent.callTool({ name: "intent_publish_intent", arguments: basicPublish() });
    const texts = (result.content as { type: string; text: string }[]).map((block) => block.text);
    expect(texts[1]).toMatch(/Give the person this link/);
    expect(texts[1]).toMatch(/do not open it/);
  });

  it("stores neither the code nor the consent token in clear", async () => {
    const rows = JSON.stringify(await h.ctx.store.db.selectFrom("holder_intents").selectAll().execute());
    for (const { intentCode, consentUrl } of published) {
      expect(rows.includes(intentCode)).toBe(false);
      expect(rows.includes(intentCode.slice(3))).toBe(false);
      expect(rows.includes(tokenOf(consentUrl))).toBe(false);
    }
  });

  it("serves the consent page at the consentUrl (the person's step, not the agent's)", async () => {
    const first = published[0] as Published;
    const page = await fetch(`${h.origin}${new URL(first.consentUrl).pathname}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(basicPublish().statement.slice(0, 20));
  });
});
