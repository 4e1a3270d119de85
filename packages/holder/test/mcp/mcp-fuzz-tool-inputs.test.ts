// Fuzzing every tool's input through a real MCP client (fast-check, 10,000+ cases per engine):
// nothing crashes, nothing answers 5xx, every refusal is a clear tool error (isError, plain words,
// no stack trace) or a JSON-RPC error, and a refused call leaves every holder table exactly as it
// was (a digest of all rows before and after). Plus raw JSON-RPC messages with arbitrary params.

import { PUSH_TOOL_NAMES, TOOL_NAMES } from "@doorbell/intents";
import { forEachEngine } from "@doorbell/store/testing";
import type { Client } from "@modelcontextprotocol/client";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import type { CallToolResult } from "@modelcontextprotocol/server";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  activeIntent,
  basicPublish,
  INITIALIZE,
  jsonRpcOf,
  MCP_HEADERS,
  octavia,
  type Published,
  rawRequest,
  startHolder,
  stateDigest,
  type TestHolder,
  textOf,
} from "../support/mcp-harness.js";

const ALL_TOOLS = [...TOOL_NAMES, ...PUSH_TOOL_NAMES];
const RUNS_PER_TOOL = 1_000; // × 10 tools = 10,000 calls
const RAW_RUNS = 1_000;
const CONTACT = "fuzz.canary.contact@example.sk";
const STACK = /\n\s+at \S|node_modules|\.ts:\d+|\.js:\d+/;

// ---------------------------------------------------------------------------------------------
// Arbitraries: mostly plausible values, often wrong ones, sometimes undeclared fields

const junk: fc.Arbitrary<unknown> = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
);

const maybe = <T>(valid: fc.Arbitrary<T>): fc.Arbitrary<unknown> =>
  fc.oneof({ arbitrary: valid, weight: 3 }, { arbitrary: junk, weight: 1 });

/** An object of some of `fields`, sometimes with undeclared keys (contact-like ones included). */
function objectOf(fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<Record<string, unknown>> {
  const extra = fc.option(
    fc.dictionary(
      fc.oneof(
        fc.constantFrom("email", "phone", "name", "contact", "__proto__", "constructor"),
        fc.string({ minLength: 1, maxLength: 12 }),
      ),
      fc.jsonValue({ maxDepth: 2 }),
      { minKeys: 1, maxKeys: 2 },
    ),
    { freq: 4, nil: undefined },
  );
  return fc
    .tuple(fc.record(fields, { requiredKeys: [] }), extra)
    .map(([object, more]) => (more === undefined ? object : { ...object, ...more }));
}

const text = (max: number) =>
  fc.oneof(
    fc.string({ maxLength: 40 }),
    fc.constantFrom("Škoda Octavia", "byt Praha", "  ", "\u0000\u0007", "🚗".repeat(30)),
    fc.string({ minLength: max + 1, maxLength: max + 5 }),
  );
const instant = fc.constantFrom(
  "2027-01-01",
  "2027-06-30T12:00:00Z",
  "2026-11-30T12:00:00+01:00",
  "2020-01-01",
  "2027-02-30",
  "tomorrow",
  "",
  "2027-01-01T00:00:00",
);
const area = maybe(
  objectOf({
    country: maybe(fc.constantFrom("SK", "CZ", "AT", "sk")),
    region: maybe(fc.constantFrom("SK-BL", "SK-KI", "CZ-10", "CZ-99", "")),
  }),
);
const money = maybe(
  objectOf({
    amount: maybe(fc.oneof(fc.integer({ min: -5, max: 2_000_000 }), fc.double({ min: -1, max: 1e13 }))),
    currency: maybe(fc.constantFrom("EUR", "CZK", "USD")),
  }),
);
const criteria = maybe(
  objectOf({
    category: maybe(fc.constantFrom("vehicles", "property", "boats")),
    make: maybe(text(60)),
    model: maybe(text(60)),
    yearMin: maybe(fc.integer({ min: 1800, max: 2200 })),
    mileageMaxKm: maybe(fc.integer({ min: -1, max: 3_000_000 })),
    fuel: maybe(fc.constantFrom("diesel", "petrol", "steam")),
    kind: maybe(fc.constantFrom("flat", "house", "castle")),
    roomsMin: maybe(fc.integer({ min: -1, max: 30 })),
    areaMinM2: maybe(fc.double({ min: -1, max: 2e6 })),
  }),
);

function argumentsFor(tool: string, codes: () => fc.Arbitrary<string>, ids: () => fc.Arbitrary<string>) {
  const code = maybe(codes());
  const id = maybe(ids());
  switch (tool) {
    case "intent_publish_intent":
      return objectOf({
        statement: maybe(text(2000)),
        criteria,
        area,
        budget: money,
        hiddenLimit: maybe(fc.double({ min: -10, max: 1e13 })),
        buyBy: maybe(instant),
        validUntil: maybe(instant),
        visibility: maybe(fc.constantFrom("private", "pseudonymous", "public")),
      });
    case "intent_get_intent":
    case "intent_withdraw_intent":
      return objectOf({ intentCode: code, id });
    case "intent_update_intent":
      return objectOf({
        id,
        intentCode: code,
        statement: maybe(text(2000)),
        criteria,
        budget: money,
        hiddenLimit: maybe(fc.oneof(fc.constant(null), fc.double({ min: -1, max: 1e6 }))),
        buyBy: maybe(fc.oneof(fc.constant(null), instant)),
        validUntil: maybe(instant),
      });
    case "intent_list_matches":
      return objectOf({
        intentCode: code,
        intent: id,
        since: maybe(
          fc.oneof(
            instant,
            fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
          ),
        ),
      });
    case "intent_demand_summary":
      return objectOf({
        category: maybe(fc.constantFrom("vehicles", "property", "boats")),
        country: maybe(fc.constantFrom("SK", "CZ", "DE")),
        region: maybe(fc.constantFrom("SK-BL", "CZ-10", "XX-1")),
        budgetBand: maybe(
          fc.constantFrom("EUR-10000-20000", "CZK-0-50000", "none", "EUR-500000-", "EUR-1-2"),
        ),
      });
    case "intent_submit_offer":
      return objectOf({
        inReplyTo: id,
        source: maybe(
          objectOf({
            kind: maybe(fc.constantFrom("reply", "catalogue")),
            ref: maybe(text(200)),
            seller: maybe(text(200)),
          }),
        ),
        title: maybe(text(200)),
        description: maybe(text(5000)),
        category: maybe(fc.constantFrom("vehicles", "property")),
        price: money,
        location: area,
        url: maybe(
          fc.constantFrom("https://cars.example.sk/1", "javascript:alert(1)", "ftp://x", "not a url"),
        ),
        attributes: maybe(
          fc.dictionary(
            fc.oneof(fc.constantFrom("make", "year", "rooms", "areaM2"), fc.string({ maxLength: 45 })),
            fc.oneof(fc.string({ maxLength: 30 }), fc.integer(), fc.double(), fc.constant(null)),
            { maxKeys: 5 },
          ),
        ),
      });
    case "intent_search_offers":
      return objectOf({
        statement: maybe(text(500)),
        limit: maybe(fc.integer({ min: -2, max: 120 })),
      });
    case "intent_subscribe_events":
      return objectOf({
        intentCode: code,
        delivery: maybe(
          objectOf({
            url: maybe(
              fc.constantFrom(
                "https://agent.example.org/hooks/1",
                "http://127.0.0.1:9/doorbell",
                "https://10.0.0.1/x",
                "javascript:alert(1)",
                "not a url",
                `https://agent.example.org/${"a".repeat(2100)}`,
              ),
            ),
            secret: maybe(
              fc.constantFrom(
                "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
                "whsec_",
                "hunter2",
                `whsec_${"A".repeat(120)}`,
              ),
            ),
          }),
        ),
        events: maybe(
          fc.array(fc.constantFrom("intent.matches.delivered", "intent.status.changed", "offer.created"), {
            maxLength: 3,
          }),
        ),
        relayFor: maybe(fc.constantFrom("agent.example.org", "not a host!", "a".repeat(254), "127.0.0.1")),
      });
    case "intent_unsubscribe_events":
      return objectOf({
        intentCode: code,
        subscriptionId: maybe(
          fc.oneof(fc.constant("sub_AAAAAAAAAAAAAAAAAAAAAAAA"), fc.string({ maxLength: 30 })),
        ),
      });
    default:
      throw new Error(`no arbitrary for ${tool}`);
  }
}

// ---------------------------------------------------------------------------------------------

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let h: TestHolder;
  let agent: Client;
  let pseudonymous: Published;
  let other: Published;
  let digest: string | undefined;
  const tally = { calls: 0, refused: 0, accepted: 0, jsonRpcErrors: 0 };

  beforeAll(async () => {
    h = await startHolder(engine, { config: { demandThreshold: 1 }, push: true });
    agent = await h.connect("fuzzer");
    pseudonymous = await activeIntent(
      h,
      agent,
      CONTACT,
      basicPublish({ visibility: "pseudonymous", hiddenLimit: 17_777 }),
    );
    other = await activeIntent(h, agent, "fuzz.other@example.sk");
    await h.services.offers.importCatalogue([octavia(), octavia({ title: "Škoda Octavia RS" })]);
  });
  afterAll(async () => {
    await h?.close();
  });

  const codes = () =>
    fc.oneof(
      fc.constant(pseudonymous.intentCode),
      fc.constant(other.intentCode),
      fc.constant(`ic_${"A".repeat(32)}`),
      fc.string({ maxLength: 50 }),
      fc.constant(pseudonymous.intentCode.toLowerCase()),
      fc.constant(` ${other.intentCode} `),
    );
  const ids = () =>
    fc.oneof(fc.constant(pseudonymous.intent.id), fc.constant(other.intent.id), fc.string({ maxLength: 30 }));

  async function check(tool: string, args: Record<string, unknown>): Promise<void> {
    const before = digest ?? (await stateDigest(h));
    tally.calls += 1;
    let result: CallToolResult;
    try {
      result = (await agent.callTool({ name: tool, arguments: args })) as CallToolResult;
    } catch (error) {
      // A JSON-RPC error is a clear refusal too, never a server fault.
      expect(error).toBeInstanceOf(McpError);
      const code = (error as McpError).code;
      expect([-32600, -32601, -32602]).toContain(code);
      expect((error as Error).message).not.toMatch(STACK);
      tally.jsonRpcErrors += 1;
      digest = await stateDigest(h);
      expect(digest).toBe(before);
      return;
    }
    const wire = JSON.stringify(result);
    expect(wire.includes(CONTACT)).toBe(false);
    expect(wire).not.toMatch(/"hiddenLimit"|17777/);
    // Push §6 rule 8: a secret is never shown again, not even in a refusal.
    expect(wire).not.toMatch(/whsec_[A-Za-z0-9]|hunter2/);
    if (result.isError) {
      tally.refused += 1;
      const words = textOf(result);
      expect(words.length).toBeGreaterThan(8);
      expect(words).not.toMatch(STACK);
      expect(words).not.toMatch(/ERR_HOLDER_INTERNAL|could not complete/);
      digest = await stateDigest(h);
      expect(digest, `${tool} was refused but changed the stored state`).toBe(before);
    } else {
      tally.accepted += 1;
      expect(result.structuredContent).toBeDefined();
      expect(JSON.parse(textOf(result).split("\n")[0] as string)).toEqual(result.structuredContent);
      digest = undefined;
    }
  }

  for (const tool of ALL_TOOLS) {
    it(`${tool}: ${RUNS_PER_TOOL} generated inputs, each answered or refused cleanly`, async () => {
      await fc.assert(
        fc.asyncProperty(argumentsFor(tool, codes, ids), (args) => check(tool, args)),
        { numRuns: RUNS_PER_TOOL },
      );
    }, 600_000);
  }

  it("raw tools/call messages with arbitrary params: 4xx or a JSON-RPC answer, never 5xx", async () => {
    const opened = await rawRequest(h.mcpUrl, { headers: MCP_HEADERS, body: JSON.stringify(INITIALIZE) });
    const session = opened.headers["mcp-session-id"] as string;
    const headers = { ...MCP_HEADERS, "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" };
    await rawRequest(h.mcpUrl, {
      headers,
      body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    });
    let id = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.record({ name: fc.constantFrom(...ALL_TOOLS), arguments: fc.jsonValue({ maxDepth: 3 }) }),
          fc.jsonValue({ maxDepth: 3 }),
          fc.record({ name: fc.jsonValue({ maxDepth: 1 }), arguments: junk }),
        ),
        fc.constantFrom("tools/call", "tools/list", "initialize", "ping", "resources/read", "x/y"),
        async (params, method) => {
          const before = digest ?? (await stateDigest(h));
          id += 1;
          const response = await rawRequest(h.mcpUrl, {
            headers,
            body: JSON.stringify({ jsonrpc: "2.0", id, method, params }),
          });
          expect(response.status).toBeLessThan(500);
          expect(response.body).not.toMatch(STACK);
          if (response.status === 200) {
            const message = jsonRpcOf(response) as { error?: { code: number }; result?: CallToolResult };
            if (message.error !== undefined) expect(message.error.code).not.toBe(-32603);
            else if (message.result?.isError !== true && method === "tools/call") {
              digest = undefined;
              return;
            }
          }
          digest = await stateDigest(h);
          expect(digest).toBe(before);
        },
      ),
      { numRuns: RAW_RUNS },
    );
  }, 600_000);

  it("made at least 10,000 tool calls, most of them refused, and some accepted", () => {
    expect(tally.calls).toBeGreaterThanOrEqual(10_000);
    expect(tally.refused).toBeGreaterThan(tally.calls / 2);
    expect(tally.accepted).toBeGreaterThan(100);
  });
});
