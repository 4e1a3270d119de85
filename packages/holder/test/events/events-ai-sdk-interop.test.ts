// Issue 15: the AI SDK's `experimental_events` client (@ai-sdk/mcp 2.0.99) follows an intent's
// `intent.matches.delivered` on a whole holder (createHolder, its SDK v2 endpoint, modern era by
// `server/discover`), signed in with an OAuth token (webhooks need an authenticated principal),
// receiving with the AI SDK's own webhook receiver on loopback.
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
import { createHolder } from "../../src/app/holder.js";
import { MATCHES_DELIVERED } from "../../src/events/index.js";
import { activeIntent, MemoryEventStore } from "../support/events-harness.js";
import { octavia } from "../support/mcp-harness.js";
import { freePort, type HolderOnLoopback, signedInClient } from "../support/oauth-harness.js";

async function until(condition: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let h: HolderOnLoopback;
  const closers: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-events-ai-sdk-"));
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    const holder = await createHolder({
      dataDir: dir,
      database: engine.url,
      publicUrl: origin,
      env: {},
      log: pino({ level: "silent" }),
      config: { name: "Doorbell demo holder" },
      oauth: {},
      webhookPolicy: "development",
      mcp: { toolRateLimit: false, sessionRateLimit: false },
      // A minute between interval checks: an event within seconds was woken by the holder.
      events: { tuning: { pushIntervalMs: 60_000 } },
      limits: {
        "mail.recipient": { points: 1000, durationSeconds: 3600 },
        "mail.client": { points: 1000, durationSeconds: 3600 },
      },
    });
    await holder.listen(port, "127.0.0.1");
    h = { holder, origin, dir };
  });
  afterAll(async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
    await h?.holder.close();
    if (h) fs.rmSync(h.dir, { recursive: true, force: true });
  });

  it.each([
    ["modern", "Karoq"],
    ["legacy", "Kamiq"],
  ] as const)(
    "%s era: discovers events, subscribes by webhook with a token, receives a match, refreshes and unsubscribes",
    async (era, model) => {
      const intent = await activeIntent(h, model, closers);
      const { tokens } = await signedInClient(h);

      const store = new MemoryEventStore();
      const received: Experimental_MCPEvent[] = [];
      const hooks = createServer(
        getRequestListener(
          createMCPEventWebhook({
            store,
            onEvent: async ({ event }) => {
              received.push(event);
            },
          }),
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
      const hookUrl = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/hooks`;

      const client = await createMCPClient({
        transport: {
          type: "http",
          url: `${h.origin}/mcp`,
          headers: { authorization: `Bearer ${tokens.access_token}` },
        },
        experimental_events: { store },
        // legacy: `initialize` and a 2025-11-25 session instead of the server/discover probe.
        ...(era === "legacy" ? { protocolVersionDiscovery: false } : {}),
      });
      closers.push(() => client.close());

      const listed = await client.experimental_events.list();
      expect(listed.events.map((e) => e.name)).toContain(MATCHES_DELIVERED);
      const result = await client.experimental_events.subscribe({
        name: MATCHES_DELIVERED,
        arguments: { intentCode: intent.intentCode },
        delivery: { mode: "webhook", url: hookUrl, allowInsecureLocalhost: true },
      });
      expect(result.truncated).toBe(false);

      await h.holder.services.offers.importCatalogue([
        octavia({
          title: `An AI SDK ${model}`,
          attributes: { make: "Škoda", model, year: 2019, mileageKm: 98_000, fuel: "diesel" },
        }),
      ]);
      await until(() => received.length === 1);
      expect(received[0]?.name).toBe(MATCHES_DELIVERED);
      expect((received[0]?.data as { offer?: { title?: string } } | undefined)?.offer?.title).toBe(
        `An AI SDK ${model}`,
      );

      const refreshed = await client.experimental_events.refresh({ id: result.id });
      expect(refreshed.id).toBe(result.id);
      await client.experimental_events.unsubscribe({ id: result.id });
      expect(store.byKey.size).toBe(0);
    },
  );
});
