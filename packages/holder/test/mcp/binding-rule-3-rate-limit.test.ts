// Binding rule 3: holders MAY limit the rate of requests. Tool calls take from a token bucket per
// client (address, else session); an empty bucket answers a tool error that says how many seconds
// to wait (and carries them in _meta), and changes nothing. New sessions per client address are
// limited too: 429 with Retry-After and a JSON-RPC error.

import { createRateLimiter } from "@doorbell/mcp-endpoint";
import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  basicPublish,
  INITIALIZE,
  jsonRpcOf,
  MCP_HEADERS,
  ok,
  rawRequest,
  refused,
  startHolder,
  stateDigest,
  type TestHolder,
} from "../support/mcp-harness.js";

describe("token bucket", () => {
  it("refills at its rate and says how long to wait", () => {
    let now = 0;
    const limiter = createRateLimiter({ capacity: 2, refillPerSecond: 0.5 }, { clock: () => now });
    expect(limiter.take("a")).toEqual({ ok: true });
    expect(limiter.take("a")).toEqual({ ok: true });
    expect(limiter.take("a")).toEqual({ ok: false, retryAfterSeconds: 2 });
    expect(limiter.take("b")).toEqual({ ok: true });
    now += 1000;
    expect(limiter.take("a")).toEqual({ ok: false, retryAfterSeconds: 1 });
    now += 1000;
    expect(limiter.take("a")).toEqual({ ok: true });
  });

  it("forgets the least recently used key when full", () => {
    const limiter = createRateLimiter({ capacity: 1, refillPerSecond: 1 }, { clock: () => 0, maxKeys: 2 });
    limiter.take("a");
    limiter.take("b");
    limiter.take("c");
    expect(limiter.size).toBe(2);
  });

  it("refuses a nonsensical limit", () => {
    expect(() => createRateLimiter({ capacity: 0, refillPerSecond: 1 })).toThrow(RangeError);
    expect(() => createRateLimiter({ capacity: 1, refillPerSecond: 0 })).toThrow(RangeError);
  });
});

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let h: TestHolder;

  beforeAll(async () => {
    h = await startHolder(engine, {
      mcp: {
        toolRateLimit: { capacity: 3, refillPerSecond: 1 },
        sessionRateLimit: { capacity: 4, refillPerSecond: 0.1 },
      },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("refuses the call after the burst with the seconds to wait, and serves again after them", async () => {
    const client = await h.connect();
    for (let i = 0; i < 3; i++) await ok(client, "intent_search_offers", { statement: "octavia" });
    const refusal = await refused(client, "intent_search_offers", { statement: "octavia" });
    expect(refusal.code).toBe("ERR_HOLDER_RATE_LIMITED");
    expect(refusal.retryAfterSeconds).toBe(1);
    expect(refusal.text).toMatch(/try again in 1 s/);
    h.clock.advance(1000);
    await ok(client, "intent_search_offers", { statement: "octavia" });
  });

  it("changes nothing when it refuses a write", async () => {
    const client = await h.connect();
    h.clock.advance(10_000);
    for (let i = 0; i < 3; i++) await ok(client, "intent_publish_intent", basicPublish());
    const before = await stateDigest(h);
    const refusal = await refused(client, "intent_publish_intent", basicPublish());
    expect(refusal.code).toBe("ERR_HOLDER_RATE_LIMITED");
    expect(await stateDigest(h)).toBe(before);
  });

  it("keys the bucket by client address: a second session from the same address shares it", async () => {
    h.clock.advance(10_000);
    const first = await h.connect("one");
    for (let i = 0; i < 3; i++) await ok(first, "intent_search_offers", { statement: "x" });
    const second = await h.connect("two");
    expect((await refused(second, "intent_search_offers", { statement: "x" })).code).toBe(
      "ERR_HOLDER_RATE_LIMITED",
    );
  });

  it("limits new sessions per address: 429, Retry-After and a JSON-RPC error", async () => {
    let response = await rawRequest(h.mcpUrl, { headers: MCP_HEADERS, body: JSON.stringify(INITIALIZE) });
    for (let i = 0; i < 10 && response.status === 200; i++) {
      response = await rawRequest(h.mcpUrl, { headers: MCP_HEADERS, body: JSON.stringify(INITIALIZE) });
    }
    expect(response.status).toBe(429);
    expect(Number(response.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect(jsonRpcOf(response).error?.message).toMatch(/too many new sessions.*try again in \d+ s/);
    h.clock.advance(60_000);
    const again = await rawRequest(h.mcpUrl, { headers: MCP_HEADERS, body: JSON.stringify(INITIALIZE) });
    expect(again.status).toBe(200);
  });
});
