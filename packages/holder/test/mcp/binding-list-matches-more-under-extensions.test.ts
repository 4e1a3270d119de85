// Binding, intent_list_matches: "anything the holder adds goes under extensions" (issue 16 item
// 14). A full page says so as extensions.more, never as a top-level `more`; nextCheckAfter (push
// §8.2 names it) stays top-level; the declared outputSchema has the same shape.
import { forEachEngine } from "@doorbell/store/testing";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOfferService } from "../../src/catalogue/service.js";
import { LIST_MATCHES_MAX } from "../../src/matching/service.js";
import {
  activeIntent,
  MINUTE,
  octavia,
  ok,
  type Published,
  startHolder,
  type TestHolder,
} from "../support/mcp-harness.js";

interface Listed {
  matches: { offer: { title: string }; deliveredAt: string }[];
  extensions?: { more?: boolean };
  nextCheckAfter?: string;
}

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let h: TestHolder;
  let agent: Client;
  let intent: Published;

  beforeAll(async () => {
    h = await startHolder(engine);
    agent = await h.connect();
    intent = await activeIntent(h, agent, "pages@example.sk");
    // One import is one transaction: every match at the same instant, so one page carries them all.
    const bulk = createOfferService(h.ctx, h.services.matching, { batchSize: 2_000 });
    h.clock.advance(MINUTE);
    await bulk.importCatalogue(
      Array.from({ length: LIST_MATCHES_MAX }, (_, i) => octavia({ title: `Octavia ${i}` })),
    );
    h.clock.advance(MINUTE);
    await bulk.importCatalogue([octavia({ title: "Octavia later" })]);
  }, 120_000);
  afterAll(async () => {
    await h?.close();
  });

  it("says a full page has more under extensions, and nothing at the top level", async () => {
    const first = await ok<Listed & Record<string, unknown>>(agent, "intent_list_matches", {
      intentCode: intent.intentCode,
    });
    expect(first.matches).toHaveLength(LIST_MATCHES_MAX);
    expect(first).not.toHaveProperty("more");
    expect(first.extensions).toEqual({ more: true });
    expect(Object.keys(first).filter((key) => key !== "nextCheckAfter")).toEqual(["matches", "extensions"]);

    const second = await ok<Listed & Record<string, unknown>>(agent, "intent_list_matches", {
      intentCode: intent.intentCode,
      since: first.matches.at(-1)?.deliveredAt,
    });
    expect(second.matches.map((m) => m.offer.title)).toEqual(["Octavia later"]);
    expect(second).not.toHaveProperty("more");
    expect(second).not.toHaveProperty("extensions");
  });

  it("declares the same shape in its outputSchema", async () => {
    const { tools } = await agent.listTools();
    const schema = tools.find((tool) => tool.name === "intent_list_matches")?.outputSchema as {
      properties: Record<string, { properties?: Record<string, unknown> }>;
    };
    expect(Object.keys(schema.properties).sort()).toEqual(["extensions", "matches", "nextCheckAfter"]);
    expect(Object.keys(schema.properties.extensions?.properties ?? {})).toEqual(["more"]);
  });
});
