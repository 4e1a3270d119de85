// Binding, intent_list_matches: [{ offer, deliveredAt }] for the offers the holder delivered,
// oldest first; `since` returns only those delivered strictly after it, and an empty answer is a
// plain { matches: [] } (consent-link rule 6: results are pulled).
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

interface Listed {
  matches: {
    offer: Record<string, unknown> & { title: string; source: { kind: string } };
    deliveredAt: string;
  }[];
  extensions?: { more?: boolean };
}

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let h: TestHolder;
  let agent: Client;
  let intent: Published;

  beforeAll(async () => {
    h = await startHolder(engine);
    agent = await h.connect();
    intent = await activeIntent(h, agent, "since@example.sk");
  });
  afterAll(async () => {
    await h?.close();
  });

  it("answers { matches: [] } before anything is delivered", async () => {
    expect(await ok(agent, "intent_list_matches", { intentCode: intent.intentCode })).toEqual({
      matches: [],
    });
  });

  it("lists delivered offers oldest first, each with deliveredAt", async () => {
    h.clock.advance(MINUTE);
    await h.services.offers.importCatalogue([octavia({ title: "First Octavia" })]);
    h.clock.advance(MINUTE);
    await h.services.offers.importCatalogue([octavia({ title: "Second Octavia" })]);
    const { matches } = await ok<Listed>(agent, "intent_list_matches", { intentCode: intent.intentCode });
    expect(matches.map((m) => m.offer.title)).toEqual(["First Octavia", "Second Octavia"]);
    expect(Date.parse(matches[0]?.deliveredAt ?? "")).toBeLessThan(Date.parse(matches[1]?.deliveredAt ?? ""));
    const offer = matches[0]?.offer;
    expect(offer?.source.kind).toBe("catalogue");
    expect(Object.keys(offer ?? {}).sort()).toEqual(
      [
        "attributes",
        "category",
        "description",
        "id",
        "location",
        "price",
        "publishedAt",
        "source",
        "title",
        "url",
      ].sort(),
    );
  });

  it("returns only what was delivered strictly after since", async () => {
    const all = await ok<Listed>(agent, "intent_list_matches", { intentCode: intent.intentCode });
    const first = all.matches[0]?.deliveredAt as string;
    const second = all.matches[1]?.deliveredAt as string;
    const after = await ok<Listed>(agent, "intent_list_matches", {
      intentCode: intent.intentCode,
      since: first,
    });
    expect(after.matches.map((m) => m.offer.title)).toEqual(["Second Octavia"]);
    expect(await ok(agent, "intent_list_matches", { intentCode: intent.intentCode, since: second })).toEqual({
      matches: [],
    });
    const offset = new Date(Date.parse(first) - 1).toISOString().replace("Z", "+00:00");
    const withOffset = await ok<Listed>(agent, "intent_list_matches", {
      intentCode: intent.intentCode,
      since: offset,
    });
    expect(withOffset.matches).toHaveLength(2);
  });

  it("accepts the intent's id as `intent`", async () => {
    const listed = await ok<Listed>(agent, "intent_list_matches", {
      intentCode: intent.intentCode,
      intent: intent.intent.id,
    });
    expect(listed.matches).toHaveLength(2);
  });

  it.each(["yesterday", "2026-11-30", "2026-11-30T12:00:00", "2026-13-01T00:00:00Z", ""])(
    "refuses since = %j plainly",
    async (since) => {
      const refusal = await refused(agent, "intent_list_matches", { intentCode: intent.intentCode, since });
      expect(refusal.text).toMatch(/since/);
      expect(refusal.text).not.toMatch(/\n\s+at /);
    },
  );
});
