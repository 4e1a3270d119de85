import { developmentPolicy } from "@doorbell/webhooks";
import { afterEach, describe, expect, it } from "vitest";
import {
  createMemoryCursorStore,
  EventsClient,
  type EventsClientOptions,
  type SubscriptionNotice,
  systemTimers,
  type Timers,
} from "../src/client/index.js";
import { fromErrorObject, isFinal } from "../src/client/wire.js";
import { sep3415, sketch } from "../src/protocol/index.js";
import type { EventsServerOptions } from "../src/server/index.js";
import {
  connectHttp,
  expectEndsWhenRevoked,
  type HttpEventsServer,
  startHttpEventsServer,
  startReceiverServer,
  take,
  until,
} from "./client-harness.js";
import { EVENT, Upstream } from "./client-upstream.js";

let server: HttpEventsServer | undefined;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await server?.close();
  server = undefined;
});

/** System time, except that waits can be held (a client that could not refresh in time). */
function holdableTimers(): Timers & { hold(): void; release(): void } {
  let held: Promise<void> | undefined;
  let releaseHeld = () => {};
  return {
    now: () => Date.now(),
    async sleep(ms, signal) {
      await systemTimers.sleep(ms, signal);
      if (held) await held;
    },
    hold() {
      held = new Promise((resolve) => {
        releaseHeld = resolve;
      });
    },
    release() {
      held = undefined;
      releaseHeld();
    },
  };
}

async function setup(
  serverOptions: Partial<EventsServerOptions> = {},
  clientOptions: Partial<EventsClientOptions> = {},
  webhookOptions: Partial<NonNullable<EventsClientOptions["webhook"]>> = {},
) {
  const upstream = new Upstream();
  server = await startHttpEventsServer((events) => upstream.register(events), {
    pushIntervalMs: 50,
    ...serverOptions,
    webhook: { policy: developmentPolicy(), allowAnonymous: true, ttlMs: 60_000, ...serverOptions.webhook },
  });
  const receiver = await startReceiverServer();
  cleanups.push(() => receiver.close());
  const url = server.url;
  const notices: SubscriptionNotice[] = [];
  const store = createMemoryCursorStore();
  const events = new EventsClient({
    connect: () => connectHttp(url),
    webhook: { url: receiver.url, ...webhookOptions },
    store,
    onNotice: (notice) => notices.push(notice),
    ...clientOptions,
  });
  receiver.mount(events);
  cleanups.push(() => events.close());
  return { upstream, events, notices, store, receiver };
}

describe("webhook mode (sketch dialect)", () => {
  it("is preferred when configured: answers its challenge, adopts the server's secret, delivers events", async () => {
    const { upstream, events, notices } = await setup();
    const sub = await events.subscribe(EVENT);
    expect(sub.mode).toBe("webhook");
    expect(notices).toContainEqual({ type: "secret-adopted", origin: "server" });
    upstream.append("hooked");
    const got = await take(sub, 1);
    expect(got[0]?.data.text).toBe("hooked");
    expect(sub.cursor).toBe("1");
  });

  it("refreshes before refreshBefore and hands deliveryStatus to the app", async () => {
    const { upstream, events, notices } = await setup({
      webhook: { policy: developmentPolicy(), allowAnonymous: true, ttlMs: 2_000 },
    });
    const sub = await events.subscribe(EVENT);
    await until(
      () => notices.some((n) => n.type === "delivery-status"),
      5_000,
      "a refresh with deliveryStatus",
    );
    expect(sub.deliveryStatus).toMatchObject({ active: true });
    // Still alive after several TTLs.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    upstream.append("still here");
    expect((await take(sub, 1))[0]?.data.text).toBe("still here");
  });

  it("re-creates a subscription that lapsed (TTL) on its next refresh, adopts the new secret, replays from the cursor", async () => {
    const timers = holdableTimers();
    const { upstream, events, notices } = await setup(
      { webhook: { policy: developmentPolicy(), allowAnonymous: true, ttlMs: 1_500 } },
      { timers },
    );
    const sub = await events.subscribe(EVENT);
    upstream.append("before");
    await take(sub, 1);
    timers.hold();
    await new Promise((resolve) => setTimeout(resolve, 1_700));
    await server?.events.sweep();
    upstream.append("while lapsed");
    timers.release();
    const got = await take(sub, 1);
    expect(got[0]?.data.text).toBe("while lapsed");
    expect(notices.filter((n) => n.type === "secret-adopted")).toHaveLength(2);
  });

  it("re-subscribes after a server restart and loses nothing from a durable upstream", async () => {
    const { upstream, events } = await setup({
      webhook: { policy: developmentPolicy(), allowAnonymous: true, ttlMs: 1_500 },
    });
    const sub = await events.subscribe(EVENT);
    upstream.append("before");
    await take(sub, 1);
    await server?.restart();
    upstream.append("across the restart");
    expect((await take(sub, 1, 15_000))[0]?.data.text).toBe("across the restart");
  });

  it("ends with ERR_EVENTS_TERMINATED when a signed error envelope says authorization was revoked", async () => {
    const { upstream, events } = await setup();
    await expectEndsWhenRevoked(upstream, server, await events.subscribe(EVENT));
  });

  it("cancel unsubscribes at once; the receiver then answers 410 on that path and 404 on unknown ones", async () => {
    const { events, store, receiver } = await setup();
    const sub = await events.subscribe(EVENT);
    const [key] = [...(await allKeys(store))];
    const route = (await store.get(key as string))?.webhook?.route as string;
    await until(
      async () => (await server?.events.countSubscriptions()) === 1,
      5_000,
      "the subscription to be live",
    );
    await sub.cancel();
    await until(
      async () => (await server?.events.countSubscriptions()) === 0,
      5_000,
      "the server to drop it",
    );
    const gone = await fetch(`${receiver.url}/${route}`, { method: "POST", body: "{}" });
    expect(gone.status).toBe(410);
    const unknown = await fetch(`${receiver.url}/nobody`, { method: "POST", body: "{}" });
    expect(unknown.status).toBe(404);
  });

  it("does not answer an unsigned challenge for a path it owns", async () => {
    const { events, store, receiver } = await setup();
    await events.subscribe(EVENT);
    const [key] = [...(await allKeys(store))];
    const record = await store.get(key as string);
    const response = await fetch(`${receiver.url}/${record?.webhook?.route}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-mcp-subscription-id": record?.webhook?.id as string,
        "x-mcp-timestamp": String(Math.floor(Date.now() / 1000)),
        "x-mcp-signature": `sha256=${"0".repeat(64)}`,
      },
      body: JSON.stringify({ type: "verification", id: record?.webhook?.id, challenge: "c1" }),
    });
    expect(response.status).toBe(401);
  });
});

describe("webhook mode (sep-3415 dialect)", () => {
  it("supplies its own whsec_ secret, learns the server-derived id and verifies Standard Webhooks deliveries", async () => {
    const { upstream, events, notices, store } = await setup(
      { dialect: "sep-3415" },
      { dialect: "sep-3415" },
    );
    const sub = await events.subscribe(EVENT);
    expect(sub.mode).toBe("webhook");
    expect(notices.some((n) => n.type === "secret-adopted")).toBe(false);
    const [key] = [...(await allKeys(store))];
    const record = await store.get(key as string);
    expect(record?.webhook?.secret).toMatch(/^whsec_/);
    expect(record?.webhook?.id).toBeTruthy();
    upstream.append("standard");
    expect((await take(sub, 1))[0]?.data.text).toBe("standard");
  });
});

async function allKeys(store: ReturnType<typeof createMemoryCursorStore>): Promise<string[]> {
  return store.keys();
}

describe("issue 15: the client's secret and a server of the other dialect", () => {
  it("accepts a vault-provisioned whsec_ secret, sends it, and verifies deliveries with it", async () => {
    const vault = `whsec_${Buffer.alloc(32, 7).toString("base64")}` as const;
    const { upstream, events, store } = await setup({}, {}, { secret: vault });
    const sub = await events.subscribe(EVENT);
    expect(sub.mode).toBe("webhook");
    const [key] = await allKeys(store);
    expect((await store.get(key as string))?.webhook?.secret).toBe(vault);
    upstream.append("from the vault");
    expect((await take(sub, 1))[0]?.data.text).toBe("from the vault");
  });

  it("refuses a provisioned secret that is not whsec_ of 24..64 bytes", () => {
    expect(
      () =>
        new EventsClient({
          connect: () => connectHttp(new URL("http://127.0.0.1:9/mcp")),
          webhook: { url: "http://127.0.0.1:9/hooks", secret: `whsec_${Buffer.alloc(8).toString("base64")}` },
        }),
    ).toThrow(expect.objectContaining({ code: "ERR_EVENTS_INVALID_ARGUMENT" }));
  });

  it("a revocation in the other dialect's codes is final, never retried forever", () => {
    // A sketch client hears SEP-3415's draft Forbidden; a SEP-3415 client the sketch's SubscriptionNotFound.
    const fromSep = fromErrorObject(sketch, { code: -32024, message: "Forbidden" }, "refresh");
    expect(fromSep.code).toBe("ERR_EVENTS_UNAUTHORIZED");
    expect(isFinal(fromSep)).toBe(true);
    const fromSketch = fromErrorObject(sep3415, { code: -32016, message: "SubscriptionNotFound" }, "refresh");
    expect(fromSketch.code).toBe("ERR_EVENTS_SUBSCRIPTION_NOT_FOUND");
    expect(isFinal(fromSketch)).toBe(true);
  });
});
