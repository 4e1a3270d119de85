// tools/list over a real MCP client: the eight tools of the binding, each with a strict input
// schema (every object refuses undeclared properties), an output schema, and the aggregator
// sentence of binding rule 2 in its description.

import { AGGREGATOR_NOTE, TOOL_NAMES } from "@doorbell/intents";
import { forEachEngine } from "@doorbell/store/testing";
import type { Client } from "@modelcontextprotocol/client";
import type { Tool } from "@modelcontextprotocol/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHolder, type TestHolder } from "../support/mcp-harness.js";

type JsonSchema = Record<string, unknown>;

/** Every object schema inside `schema`, with its path. */
function objectSchemas(schema: unknown, path = "$"): { path: string; schema: JsonSchema }[] {
  if (typeof schema !== "object" || schema === null) return [];
  const node = schema as JsonSchema;
  const found: { path: string; schema: JsonSchema }[] = [];
  if (node.type === "object") found.push({ path, schema: node });
  for (const [key, value] of Object.entries(node)) {
    if (key === "properties" && typeof value === "object" && value !== null) {
      for (const [name, child] of Object.entries(value))
        found.push(...objectSchemas(child, `${path}.${name}`));
    } else if (Array.isArray(value)) {
      value.forEach((child, index) => {
        found.push(...objectSchemas(child, `${path}.${key}[${index}]`));
      });
    } else if (typeof value === "object" && value !== null) {
      found.push(...objectSchemas(value, `${path}.${key}`));
    }
  }
  return found;
}

/** Every property name declared anywhere in `schema`. */
function propertyNames(schema: unknown): string[] {
  return objectSchemas(schema).flatMap(({ schema: node }) => Object.keys((node.properties as object) ?? {}));
}

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let h: TestHolder;
  let client: Client;
  let tools: Tool[];

  beforeAll(async () => {
    h = await startHolder(engine);
    client = await h.connect();
    tools = (await client.listTools()).tools;
  });
  afterAll(async () => {
    await h?.close();
  });

  it("lists exactly the eight intent_* tools of the binding", () => {
    expect(tools.map((tool) => tool.name).sort()).toEqual([...TOOL_NAMES].sort());
    expect(tools).toHaveLength(8);
  });

  it("says in every description that results come from a market aggregator and may be incomplete (binding rule 2)", () => {
    for (const tool of tools) {
      expect(tool.description, tool.name).toContain(AGGREGATOR_NOTE);
      expect(tool.description, tool.name).toMatch(/market aggregator/);
      expect(tool.description, tool.name).toMatch(/may be incomplete/);
    }
  });

  it("declares every object of every input schema with additionalProperties: false", () => {
    for (const tool of tools) {
      const objects = objectSchemas(tool.inputSchema);
      expect(objects.length, tool.name).toBeGreaterThan(0);
      for (const { path, schema } of objects) {
        // A record (attributes) is the one open object: its keys are checked by propertyNames.
        if (schema.propertyNames !== undefined) continue;
        expect(schema.additionalProperties, `${tool.name} ${path}`).toBe(false);
      }
    }
  });

  it("gives intent_publish_intent no contact field at all (consent-link rule 1)", () => {
    const publish = tools.find((tool) => tool.name === "intent_publish_intent");
    const names = propertyNames(publish?.inputSchema);
    expect(names).toContain("statement");
    for (const name of names) expect(name).not.toMatch(/mail|phone|name|contact|address|tel/i);
    expect(publish?.inputSchema.required).toEqual(expect.arrayContaining(["statement", "area"]));
  });

  it("takes the intentCode in the buyer tools and declares the binding's inputs", () => {
    const input = (name: string) => tools.find((tool) => tool.name === name)?.inputSchema;
    for (const name of ["intent_get_intent", "intent_withdraw_intent", "intent_list_matches"]) {
      expect(input(name)?.required, name).toContain("intentCode");
    }
    expect(Object.keys(input("intent_list_matches")?.properties ?? {}).sort()).toEqual([
      "intent",
      "intentCode",
      "since",
    ]);
    expect(input("intent_update_intent")?.required).toEqual(["id"]);
    expect(input("intent_submit_offer")?.required).toEqual(
      expect.arrayContaining(["inReplyTo", "title", "category", "price", "location"]),
    );
    expect(input("intent_search_offers")?.required).toEqual(["statement"]);
    expect(input("intent_demand_summary")?.required).toEqual(
      expect.arrayContaining(["category", "country", "budgetBand"]),
    );
  });

  it("publishes output schemas, and list_matches answers { matches: [...] }", () => {
    for (const tool of tools) expect(tool.outputSchema, tool.name).toBeDefined();
    const list = tools.find((tool) => tool.name === "intent_list_matches");
    expect(list?.outputSchema?.properties).toHaveProperty("matches");
  });

  it("names the grid's budget bands as an enum of intent_demand_summary", () => {
    const demand = tools.find((tool) => tool.name === "intent_demand_summary");
    const band = (demand?.inputSchema.properties as Record<string, JsonSchema> | undefined)?.budgetBand;
    const ids = h.services.demand.grid().budgetBands.map((b) => b.id);
    expect(band?.enum).toEqual(ids);
    for (const id of ids) expect(demand?.description).toContain(id);
  });
});
