// The binding lists intent_publish_intent's area among the inputs after "optional"; this holder
// keeps it required (docs/decisions.md, "Issue 30 items 3, 4 and 9"): the country decides which
// offers can match, which demand-summary cell counts the intent and the hidden limit's currency.
// An agent learns that before it calls (the tool's schema says it) and when it leaves area out
// (the refusal says why and how to ask for a whole country).
import { forEachEngine } from "@doorbell/store/testing";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  basicPublish,
  ok,
  type Published,
  refused,
  startHolder,
  type TestHolder,
} from "../support/mcp-harness.js";

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let h: TestHolder;
  let agent: Client;

  beforeAll(async () => {
    h = await startHolder(engine);
    agent = await h.connect();
  });
  afterAll(async () => {
    await h?.close();
  });

  it("declares area required and says why in the published schema", async () => {
    const { tools } = await agent.listTools();
    const publish = tools.find((tool) => tool.name === "intent_publish_intent");
    const schema = publish?.inputSchema as {
      required?: string[];
      properties: Record<string, { description?: string }>;
    };
    expect(schema.required).toContain("area");
    expect(schema.properties.area?.description).toMatch(/required/i);
    expect(schema.properties.area?.description).toMatch(/whole country/i);
    expect(publish?.description).toMatch(/area/);
  });

  it("refuses a publish without area with the reason and the whole-country form", async () => {
    const { area: _area, ...withoutArea } = basicPublish();
    const refusal = await refused(agent, "intent_publish_intent", withoutArea);
    expect(refusal.text).toMatch(/area is required/);
    expect(refusal.text).toMatch(/\{ ?"country": ?"SK" ?\}/);
    expect(refusal.text).toMatch(/currency|demand|match/);
  });

  it("takes a whole country as the widest area", async () => {
    const published = await ok<Published & { intent: { area: unknown } }>(
      agent,
      "intent_publish_intent",
      basicPublish({ area: { country: "CZ" }, budget: undefined }),
    );
    expect(published.intent.area).toEqual({ country: "CZ" });
  });
});
