// Interop with a client someone else wrote: Vercel's AI SDK (`@ai-sdk/mcp` 2.0.99,
// `experimental_events`) subscribes to the check-function example server (SDK v2,
// createMcpHandler) and receives with its own `experimental_createMCPEventWebhook` receiver.
// Both eras: the modern probe (`server/discover`) and the legacy `initialize` fallback.
import {
  experimental_createMCPClient as createMCPClient,
  experimental_createMCPEventWebhook as createMCPEventWebhook,
  type Experimental_MCPEvent,
  type MCPClient,
} from "@ai-sdk/mcp";
import { afterEach, describe, expect, it } from "vitest";
import {
  createExampleApp,
  type ExampleApp,
  listenExample,
} from "../../../examples/events-check-function/server.js";
import { MemoryEventStore, QUICK_RETRY, serveFetch, until } from "./interop-harness.js";

interface Rig {
  app: ExampleApp;
  client: MCPClient;
  store: MemoryEventStore;
  events: Experimental_MCPEvent[];
  gaps: { cursor: string; messageId: string }[];
  terminations: unknown[];
  hookUrl: string;
}

const open: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close().catch(() => undefined);
});

async function rig(era: "modern" | "legacy", retain = 1_000): Promise<Rig> {
  const app = await createExampleApp({
    allowLoopbackWebhooks: true,
    retain,
    tuning: { pushIntervalMs: 60_000, webhook: { minTtlMs: 500, retry: QUICK_RETRY } },
  });
  const { url, server } = await listenExample(app);
  open.push(async () => {
    server.closeAllConnections();
    server.close();
    await app.close();
  });
  const store = new MemoryEventStore();
  const events: Experimental_MCPEvent[] = [];
  const gaps: { cursor: string; messageId: string }[] = [];
  const terminations: unknown[] = [];
  const receiver = createMCPEventWebhook({
    store,
    onEvent: async ({ event }) => {
      events.push(event);
    },
    onGap: async ({ gap, messageId }) => {
      gaps.push({ cursor: gap.cursor, messageId });
    },
    onTerminated: async ({ termination }) => {
      terminations.push(termination);
    },
  });
  const hooks = await serveFetch(receiver);
  open.push(hooks.close);
  const client = await createMCPClient({
    transport: { type: "http", url, headers: { authorization: "Bearer dev-token" } },
    experimental_events: { store },
    ...(era === "legacy" ? { protocolVersionDiscovery: false } : {}),
  });
  open.push(() => client.close());
  return { app, client, store, events, gaps, terminations, hookUrl: `${hooks.url}/hooks` };
}

function subscribe(r: Rig, ttlMs?: number) {
  return r.client.experimental_events.subscribe({
    name: "order.placed",
    arguments: {},
    delivery: { mode: "webhook", url: r.hookUrl, allowInsecureLocalhost: true },
    ...(ttlMs === undefined ? {} : { ttlMs }),
  });
}

function place(r: Rig, item: string): void {
  r.app.book.place("ada", item);
  r.app.events.wake("order.placed");
}

describe.each(["modern", "legacy"] as const)("the AI SDK's experimental_events (%s era)", (era) => {
  it("lists, subscribes, receives with its own receiver, refreshes and unsubscribes", async () => {
    const r = await rig(era);
    const listed = await r.client.experimental_events.list();
    const order = listed.events.find((e) => e.name === "order.placed");
    expect(order?.delivery).toEqual(["poll", "push", "webhook"]);

    const result = await subscribe(r);
    expect(result.id).toMatch(/^sub_/);
    expect(result.truncated).toBe(false);
    expect(Date.parse(result.refreshBefore ?? "")).toBeGreaterThan(Date.now());

    place(r, "kettle");
    await until(() => r.events.length === 1);
    expect(r.events[0]).toMatchObject({ eventId: "order_1", name: "order.placed", data: { item: "kettle" } });
    // The receiver saved the event's cursor: the next refresh resumes after it.
    const saved = [...r.store.byKey.values()][0];
    expect(saved?.cursor).toBe("1");

    const refreshed = await r.client.experimental_events.refresh({ id: result.id });
    expect(refreshed.id).toBe(result.id);
    expect(refreshed.cursor).toBe("1");
    place(r, "teapot");
    await until(() => r.events.length === 2);
    expect(r.events[1]?.eventId).toBe("order_2");

    await r.client.experimental_events.unsubscribe({ id: result.id });
    expect(r.store.byKey.size).toBe(0);
    expect(await r.app.events.countSubscriptions()).toBe(0);
  });

  it("a subscription that lapsed and lost its history gets a signed gap on refresh, then events again", async () => {
    const r = await rig(era, 2);
    // Long enough that a loaded machine delivers within it (the receiver 410s past refreshBefore).
    const result = await subscribe(r, 5_000);
    place(r, "first");
    await until(() => r.events.length === 1);

    // The client misses its refresh: past refreshBefore the server ends the subscription.
    await until(() => Date.now() > Date.parse(result.refreshBefore ?? ""));
    await r.app.events.sweep();
    expect(await r.app.events.countSubscriptions()).toBe(0);
    for (const item of ["a", "b", "c", "d"]) place(r, item);

    // Its refresh resumes from the saved cursor, which the order book no longer holds.
    const again = await r.client.experimental_events.refresh({ id: result.id });
    expect(again.truncated).toBe(true);
    await until(() => r.gaps.length === 1);
    expect(r.gaps[0]?.cursor).toBe("5");
    expect([...r.store.byKey.values()][0]).toMatchObject({ cursor: "5", truncated: true });

    place(r, "after the gap");
    await until(() => r.events.length === 2);
    expect(r.events[1]).toMatchObject({ eventId: "order_6", data: { item: "after the gap" } });
  });
});

describe("what the AI SDK is refused", () => {
  it("webhook subscriptions without a token are Forbidden (-32012)", async () => {
    const r = await rig("modern");
    const anonymous = await createMCPClient({
      transport: { type: "http", url: (await listenAgain(r)).url },
      experimental_events: { store: new MemoryEventStore() },
    });
    open.push(() => anonymous.close());
    await expect(
      anonymous.experimental_events.subscribe({
        name: "order.placed",
        delivery: { mode: "webhook", url: r.hookUrl, allowInsecureLocalhost: true },
      }),
    ).rejects.toMatchObject({ code: -32012 });
  });
});

async function listenAgain(r: Rig) {
  const { url, server } = await listenExample(r.app);
  open.push(async () => {
    server.closeAllConnections();
    server.close();
  });
  return { url };
}
