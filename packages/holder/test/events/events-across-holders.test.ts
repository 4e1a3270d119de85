// MCP Events across holders on one database: each `createHolder` here has its own store handle,
// delivery worker and change bus, as a process of its own would (the CLI test of the same name
// runs real processes). A webhook subscription made through one holder is the same subscription
// through another; an import through a third wakes it at once (the interval check is an hour
// away, so only the change bus explains an arrival); the holder the subscription was made
// through closing without a goodbye loses nothing.
import fs from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import {
  experimental_createMCPClient as createMCPClient,
  experimental_createMCPEventWebhook as createMCPEventWebhook,
  type Experimental_MCPEvent,
} from "@ai-sdk/mcp";
import { forEachEngine } from "@doorbell/store/testing";
import { getRequestListener } from "@hono/node-server";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHolder, type Holder } from "../../src/app/holder.js";
import { MATCHES_DELIVERED } from "../../src/events/index.js";
import { activeIntent, MemoryEventStore } from "../support/events-harness.js";
import { octavia } from "../support/mcp-harness.js";
import { freePort, type HolderOnLoopback, signedInClient } from "../support/oauth-harness.js";

async function until(what: string, condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-events-across-"));
  const holders: HolderOnLoopback[] = [];
  const closers: (() => Promise<void>)[] = [];

  /**
   * One holder on the shared database and keys, listening on a port of its own; all share the
   * first one's public URL, as processes behind one load balancer do (tokens name that resource).
   */
  let publicUrl: string | undefined;
  async function holderOnLoopback(serve: boolean): Promise<HolderOnLoopback> {
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    publicUrl ??= origin;
    const holder: Holder = await createHolder({
      dataDir: dir,
      database: engine.url,
      publicUrl,
      env: {},
      log: pino({ level: "silent" }),
      config: { name: "Doorbell demo holder" },
      oauth: {},
      webhookPolicy: "development",
      mcp: { toolRateLimit: false, sessionRateLimit: false },
      // An hour between interval checks: an event within seconds was woken by a change.
      events: serve ? { tuning: { pushIntervalMs: 3_600_000 } } : false,
      background: serve,
      limits: {
        "mail.recipient": { points: 1000, durationSeconds: 3600 },
        "mail.client": { points: 1000, durationSeconds: 3600 },
      },
    });
    await holder.listen(port, "127.0.0.1");
    const h = { holder, origin, dir };
    holders.push(h);
    return h;
  }

  let first: HolderOnLoopback;
  let second: HolderOnLoopback;
  let importer: HolderOnLoopback;
  beforeAll(async () => {
    first = await holderOnLoopback(true);
    second = await holderOnLoopback(true);
    importer = await holderOnLoopback(false);
  });
  afterAll(async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
    for (const h of holders) await h.holder.close().catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function aiSdkReceiver() {
    const store = new MemoryEventStore();
    const received: Experimental_MCPEvent[] = [];
    const hooks = createServer(
      getRequestListener(
        createMCPEventWebhook({ store, onEvent: async ({ event }) => void received.push(event) }),
      ),
    );
    await new Promise<void>((resolve) => hooks.listen(0, "127.0.0.1", resolve));
    closers.push(
      () =>
        new Promise<void>((resolve) => {
          hooks.closeAllConnections();
          hooks.close(() => resolve());
        }),
    );
    return { store, received, url: `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/hooks` };
  }

  async function aiSdkClient(h: HolderOnLoopback, token: string, store: MemoryEventStore) {
    const client = await createMCPClient({
      transport: { type: "http", url: `${h.origin}/mcp`, headers: { authorization: `Bearer ${token}` } },
      experimental_events: { store },
    });
    closers.push(() => client.close());
    return client;
  }

  it("a subscription made through one holder is fed through the others: an import elsewhere arrives at once, a refresh elsewhere is the same subscription", async () => {
    const intent = await activeIntent(first, "Karoq", closers);
    const { tokens } = await signedInClient(first);
    const receiver = await aiSdkReceiver();
    const throughFirst = await aiSdkClient(first, tokens.access_token, receiver.store);
    const made = await throughFirst.experimental_events.subscribe({
      name: MATCHES_DELIVERED,
      arguments: { intentCode: intent.intentCode },
      delivery: { mode: "webhook", url: receiver.url, allowInsecureLocalhost: true },
    });

    // The holder it was made through goes away: its stream of work is the others' now.
    await first.holder.close();
    await importer.holder.services.offers.importCatalogue([
      octavia({
        title: "A Karoq from the import",
        attributes: { make: "Škoda", model: "Karoq", year: 2019, mileageKm: 98_000, fuel: "diesel" },
      }),
    ]);
    await until("the imported match at the AI SDK's receiver", () => receiver.received.length === 1);
    expect((receiver.received[0]?.data as { offer?: { title?: string } } | undefined)?.offer?.title).toBe(
      "A Karoq from the import",
    );

    // The refresh lands on another holder: the same subscription, with its history.
    const throughSecond = await aiSdkClient(second, tokens.access_token, receiver.store);
    const refreshed = await throughSecond.experimental_events.refresh({ id: made.id });
    expect(refreshed.id).toBe(made.id);
    expect(await second.holder.events?.server.countSubscriptions()).toBe(1);

    await importer.holder.services.offers.importCatalogue([
      octavia({
        title: "A second Karoq",
        attributes: { make: "Škoda", model: "Karoq", year: 2020, mileageKm: 60_000, fuel: "diesel" },
      }),
    ]);
    await until("the second match", () => receiver.received.length === 2);
    // Each match once, whichever holders heard of it.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(new Set(receiver.received.map((event) => event.eventId)).size).toBe(2);
    expect(receiver.received).toHaveLength(2);
  });
});
