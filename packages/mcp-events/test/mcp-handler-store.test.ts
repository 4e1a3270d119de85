// The mcp-handler subscription store's fencing, on SQLite and PostgreSQL: a prepare supersedes
// every older attempt for its key, a commit must hold the current unexpired token, a repeated
// commit converges, and a remove leaves nothing a delayed commit could revive.
import { deliveryMigrations } from "@doorbell/delivery";
import { createSealer, generateKeyEntry, Keyring, migrate } from "@doorbell/store";
import { forEachEngine } from "@doorbell/store/testing";
import { developmentPolicy } from "@doorbell/webhooks";
import type { ExperimentalMcpEventContext, ExperimentalMcpSubscriptionKey } from "mcp-handler";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type McpHandlerEvents, mcpHandlerEvents, mcpHandlerMigrations } from "../src/mcp-handler/index.js";

const context = { principal: "p", signal: new AbortController().signal } as ExperimentalMcpEventContext;
let serial = 0;
const keyOf = (principal = "tenant:ada"): ExperimentalMcpSubscriptionKey => ({
  id: `sub_${++serial}`,
  principal,
  name: "order.placed",
  arguments: {},
  url: "https://hooks.example.com/h",
});
const SECRET = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;
const grant = (key: ExperimentalMcpSubscriptionKey) => ({
  ...key,
  secret: SECRET,
  refreshBefore: new Date(Date.now() + 60_000).toISOString(),
  cursor: null,
});

// One sealer for every binding on the suite's database: each engine's worker opens every row.
const sealer = createSealer(new Keyring([generateKeyEntry()]));

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let now = Date.now();
  let events: McpHandlerEvents;
  beforeAll(async () => {
    const store = engine.db as unknown as Parameters<typeof mcpHandlerEvents>[0]["store"];
    await migrate(store, [deliveryMigrations, mcpHandlerMigrations]);
    events = mcpHandlerEvents({
      store,
      sealer,
      events: [],
      policy: developmentPolicy(),
      worker: false,
      maxSubscriptionsPerPrincipal: 3,
      clock: () => now,
    });
  });
  afterAll(async () => {
    await events?.close();
  });
  const stale = { code: "ERR_MCP_HANDLER_STALE_OPERATION" };

  it("a newer prepare fences the older attempt; the current one commits, and again converges", async () => {
    const key = keyOf();
    const older = await events.subscriptions.prepare(key, context);
    const newer = await events.subscriptions.prepare(key, context);
    expect(newer).not.toBe(older);
    await expect(events.subscriptions.upsert(grant(key), context, older)).rejects.toMatchObject(stale);
    const state = await events.subscriptions.upsert(grant(key), context, newer);
    expect(state).toMatchObject({ cursor: null, truncated: false });
    await expect(events.subscriptions.upsert(grant(key), context, newer)).resolves.toMatchObject({
      cursor: null,
    });
  });

  it("of two commits racing on one key, only the holder of the current token wins", async () => {
    const key = keyOf();
    const tokens = await Promise.all([
      events.subscriptions.prepare(key, context),
      events.subscriptions.prepare(key, context),
    ]);
    const results = await Promise.allSettled(
      tokens.map((token) => events.subscriptions.upsert(grant(key), context, token)),
    );
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
  });

  it("remove ends the grant; a delayed commit cannot revive it; a second remove finds nothing", async () => {
    const key = keyOf();
    const token = await events.subscriptions.prepare(key, context);
    await events.subscriptions.upsert(grant(key), context, token);
    expect(await events.subscriptions.remove(key, context)).toBe(true);
    await expect(events.subscriptions.upsert(grant(key), context, token)).rejects.toMatchObject(stale);
    expect(await events.subscriptions.remove(key, context)).toBe(false);
  });

  it("a pending reservation counts for remove, and an expired one commits nothing", async () => {
    const pending = keyOf();
    await events.subscriptions.prepare(pending, context);
    expect(await events.subscriptions.remove(pending, context)).toBe(true);

    const slow = keyOf();
    const token = await events.subscriptions.prepare(slow, context);
    now += 3 * 60_000;
    await expect(events.subscriptions.upsert(grant(slow), context, token)).rejects.toMatchObject(stale);
    now = Date.now();
  });

  it("admission is enforced at prepare, before any network work", async () => {
    const principal = `tenant:${engine.dialect}-quota`;
    for (let i = 0; i < 3; i++) await events.subscriptions.prepare(keyOf(principal), context);
    await expect(events.subscriptions.prepare(keyOf(principal), context)).rejects.toMatchObject({
      code: -32013,
    });
  });

  it("a callback that keeps failing its challenge is refused without being contacted again", async () => {
    const key = { ...keyOf(), url: "https://127.0.0.1:1/never" };
    const target = { ...key, secret: SECRET };
    const quick = mcpHandlerEvents({
      store: engine.db as unknown as Parameters<typeof mcpHandlerEvents>[0]["store"],
      sealer,
      events: [],
      policy: developmentPolicy(),
      worker: false,
      verifyTimeoutMs: 50,
    });
    try {
      for (let i = 0; i < 5; i++)
        expect(await quick.delivery.verifyEndpoint(target, context)).toEqual({
          verified: false,
          reason: "connection_refused",
        });
      expect(await quick.delivery.verifyEndpoint(target, context)).toEqual({
        verified: false,
        reason: "challenge_failed",
      });
    } finally {
      await quick.close();
    }
  });
});
