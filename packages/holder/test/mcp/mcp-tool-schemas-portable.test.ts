// tools/list over real MCP clients of both eras: no schema of any tool (input or output, the push
// tools and the signed-in variants too) uses a type array, which MCP Inspector flags as not
// portable, or `format: "date"`, on which Mastra's validator warns. The values they accept stay
// the same: a plain date is still refused when it is no calendar date.
import { forEachEngine } from "@doorbell/store/testing";
import type { Tool } from "@modelcontextprotocol/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startHolder, type TestHolder, textOf } from "../support/mcp-harness.js";

/** Every place in `schema` that a client might read differently, with its path. */
function unportable(schema: unknown, path = "$"): string[] {
  if (typeof schema !== "object" || schema === null) return [];
  if (Array.isArray(schema)) return schema.flatMap((child, index) => unportable(child, `${path}[${index}]`));
  const node = schema as Record<string, unknown>;
  const found: string[] = [];
  if (Array.isArray(node.type)) found.push(`${path}.type ${JSON.stringify(node.type)}`);
  if (node.format === "date") found.push(`${path}.format "date"`);
  for (const [key, value] of Object.entries(node)) {
    if (key === "enum" || key === "const") continue;
    found.push(...unportable(value, `${path}.${key}`));
  }
  return found;
}

function schemasOf(tools: Tool[]): { name: string; schema: unknown }[] {
  return tools.flatMap((tool) => [
    { name: `${tool.name} input`, schema: tool.inputSchema },
    { name: `${tool.name} output`, schema: tool.outputSchema },
  ]);
}

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let plain: TestHolder;
  let signedIn: TestHolder;

  beforeAll(async () => {
    plain = await startHolder(engine, { push: true });
    signedIn = await startHolder(engine, {
      push: true,
      mcp: {
        authenticate: async (request) =>
          request.headers.get("authorization") === "Bearer good-token"
            ? { token: "good-token", clientId: "agent-1", scopes: ["intents"], extra: { subject: "p" } }
            : undefined,
      },
    });
  });
  afterAll(async () => {
    await plain?.close();
    await signedIn?.close();
  });

  it("lists every tool's schemas with single types and no format date, in both eras", async () => {
    const lists = [
      (await (await plain.connect()).listTools()).tools,
      (await (await plain.connectLegacy()).listTools()).tools as Tool[],
      (await (await signedIn.connect()).listTools()).tools,
    ];
    for (const tools of lists) {
      expect(tools.map((tool) => tool.name)).toContain("intent_subscribe_events");
      for (const { name, schema } of schemasOf(tools)) expect(unportable(schema), name).toEqual([]);
    }
  });

  it("still publishes the union of a string and a number, and still refuses a date that is no date", async () => {
    const tools = (await (await plain.connect()).listTools()).tools;
    const search = tools.find((tool) => tool.name === "intent_search_offers");
    const properties = search?.outputSchema?.properties as Record<string, unknown> | undefined;
    const offers = properties?.offers as { items: { properties: Record<string, unknown> } } | undefined;
    const offer = offers?.items.properties ?? {};
    expect(offer.attributes).toMatchObject({
      additionalProperties: { anyOf: [{ type: "string" }, { type: "number" }] },
    });
    const client = await plain.connect();
    const result = await call(client, "intent_publish_intent", {
      statement: "a used car",
      area: { country: "SK" },
      buyBy: "2027-02-30",
    });
    expect(result.isError, textOf(result)).toBe(true);
  });
});
