/**
 * The forwarder's tests: a forwarder on a test engine's database served on loopback, an agent's
 * doorbell endpoint (the holder's push tests' one, ../../holder/test/support/push-endpoint.ts), a relay
 * made the way subscribe makes one, and holder-side doorbells signed with `createStandardSigner`
 * the way a holder signs.
 */
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { generateKeyEntry, Keyring } from "@doorbell/store";
import type { EngineFixture } from "@doorbell/store/testing";
import { createStandardSigner, developmentPolicy, generateSecret } from "@doorbell/webhooks";
import { pino } from "pino";
import type { AgentEndpoint } from "../../holder/test/support/push-endpoint.js";
import { relayPathFor } from "../src/codes.js";
import { deliveryDb, type ForwarderDb } from "../src/context.js";
import { type CreateForwarderOptions, createForwarder, type Forwarder } from "../src/forwarder.js";
import { createRecord } from "../src/records.js";
import { insertRelay, recordHolderSide } from "../src/relays.js";

export const keyring = new Keyring([generateKeyEntry()]);

export { type AgentEndpoint, startAgentEndpoint } from "../../holder/test/support/push-endpoint.js";

/** A forwarder on the engine's database, listening on loopback, doorbells allowed to loopback. */
export async function startForwarder(
  engine: EngineFixture,
  upstream: string,
  options: Partial<CreateForwarderOptions> = {},
): Promise<{ forwarder: Forwarder; origin: string; mcpUrl: URL; close(): Promise<void> }> {
  // The public URL names the port, so listen first on a port of our choosing.
  const probe = createServer();
  probe.listen(0, "127.0.0.1");
  await once(probe, "listening");
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  const origin = `http://127.0.0.1:${port}`;
  const forwarder = await createForwarder({
    upstream,
    store: engine.db as unknown as ForwarderDb,
    keyring,
    publicUrl: origin,
    policy: developmentPolicy({ timeoutMs: 5_000 }),
    log: pino({ level: "silent" }),
    mcp: { toolRateLimit: false },
    worker: { pollMs: 20 },
    engine: { challengeDelaysMs: [200, 200] },
    ...options,
  });
  await forwarder.listen(port, "127.0.0.1");
  return { forwarder, origin, mcpUrl: new URL(`${origin}/mcp`), close: () => forwarder.close() };
}

/** A relay as `intent_subscribe_events` leaves it: the agent's endpoint proven, the holder's side recorded. */
export async function makeRelay(forwarder: Forwarder, agent: AgentEndpoint) {
  const ctx = forwarder.context;
  const now = Date.now();
  const sub = await ctx.engine.subscribe(deliveryDb(ctx.store.db), {
    channel: "push",
    url: agent.url,
    secret: agent.secret,
    expiresAt: now + 7 * 86_400_000,
    refreshBefore: now + 6 * 86_400_000,
    requiresApproval: false,
  });
  await until(async () => (await ctx.engine.get(deliveryDb(ctx.store.db), sub.id)).verified);
  // The intent record comes first, as in the forwarder: the relay's code opens its holder code.
  const holderCode = `ic_${randomBytes(16).toString("hex")}`;
  const { forwarderCode } = await createRecord(ctx, holderCode);
  const path = relayPathFor(forwarderCode, sub.id);
  const holderSecret = generateSecret();
  const holderSubscriptionId = `sub_${randomBytes(12).toString("hex")}`;
  await insertRelay(ctx, {
    agentSubscriptionId: sub.id,
    path,
    forwarderCode,
    agentUrl: agent.url,
    holderHost: "holder.example",
    holderSecret,
    expiresAt: sub.expiresAt,
    refreshBefore: sub.refreshBefore,
  });
  await recordHolderSide(ctx, sub.id, {
    holderSubscriptionId,
    expiresAt: sub.expiresAt,
    refreshBefore: sub.refreshBefore,
  });
  return { id: sub.id, forwarderCode, path, holderSecret, holderSubscriptionId, holderCode };
}
export type Relay = Awaited<ReturnType<typeof makeRelay>>;

/**
 * Every sealed value in the relay table that the forwarder's keyring alone opens, opened: each
 * column's value under every associated data the forwarder has used for a relay row (the secrets
 * towards the holder, and the holder-code copy migration 3 removed).
 */
export async function openedByKeyring(forwarder: Forwarder): Promise<string[]> {
  const ctx = forwarder.context;
  const rows = await ctx.store.db.selectFrom("forwarder_relays").selectAll().execute();
  const opened: string[] = [];
  for (const row of rows) {
    const id = row.agent_subscription_id;
    const purposes = [
      `forwarder.relay.holder_secret.current:${id}`,
      `forwarder.relay.holder_secret.previous:${id}`,
      `forwarder.relay.holder_code:${id}`,
    ];
    for (const value of Object.values(row)) {
      if (typeof value !== "string" || !value.startsWith("v1.")) continue;
      for (const ad of purposes) {
        try {
          opened.push(ctx.sealer.openText(value, ad));
        } catch {
          // Not sealed for this purpose.
        }
      }
    }
  }
  return opened;
}

/** Rings the relay the way the holder does: body bytes signed with the forwarder's secret. */
export async function ring(
  origin: string,
  relay: Pick<Relay, "path" | "holderSecret">,
  body: unknown,
  options: { id?: string; timestamp?: number; secret?: string } = {},
): Promise<Response> {
  const bytes = Buffer.from(typeof body === "string" ? body : JSON.stringify(body), "utf8");
  const headers = createStandardSigner({ secrets: [options.secret ?? relay.holderSecret] }).headers({
    id: options.id ?? `msg_${randomBytes(12).toString("hex")}`,
    timestamp: options.timestamp ?? Math.floor(Date.now() / 1000),
    body: bytes,
  });
  return fetch(`${origin}/relay/${relay.path}`, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json" },
    body: bytes,
  });
}

export const doorbell = (
  type: string,
  data: Record<string, unknown>,
  timestamp = new Date().toISOString(),
) => ({
  specVersion: "0.4",
  type,
  timestamp,
  data,
});

/** Polls until `check` holds (real time: deliveries cross real sockets). */
export async function until(check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
