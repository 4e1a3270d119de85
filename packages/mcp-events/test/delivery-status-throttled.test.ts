// Issue 15 item 2: `deliveryStatus.throttled` and `retryAfterMs` when the receiver rate-limits (429,
// or 503, with Retry-After), as each client reads them on its refresh: the AI SDK's
// `experimental_events.refresh` (SEP-3415, which defines both fields) and a sketch-dialect client
// (whose deliveryStatus has neither). Real loopback receivers, a durable outbox on both engines.
import { createServer } from "node:http";
import {
  experimental_createMCPClient as createMCPClient,
  experimental_createMCPEventWebhook as createMCPEventWebhook,
  type Experimental_MCPEvent,
} from "@ai-sdk/mcp";
import { type DeliveryTables, deliveryMigrations } from "@doorbell/delivery";
import { createSealer, type Database, generateKeyEntry, Keyring, migrate } from "@doorbell/store";
import { forEachEngine } from "@doorbell/store/testing";
import { developmentPolicy, generateSecret } from "@doorbell/webhooks";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createExampleApp, listenExample } from "../../../examples/events-check-function/server.js";
import { createEventsServer, type EventsTables, eventsMigrations } from "../src/index.js";
import { emailReceived, emitEmail, newHooks } from "./fixtures.js";
import { type Json, listen, RawSession, serveEvents } from "./harness.js";
import { MemoryEventStore, serveFetch, until } from "./interop-harness.js";

// The schedule alone would wait 100–300 ms; a Retry-After of 3 s is honoured up to 10 s.
const RETRY = {
  delaysMs: [100, 200, ...Array.from({ length: 200 }, () => 300)],
  horizonMs: 60_000,
  jitter: 0,
  retryAfterCapMs: 10_000,
};
const RETRY_AFTER_S = 3;
const sealer = createSealer(new Keyring([generateKeyEntry()]));

/** How the receiver answers events for now: undefined passes them on. */
type Answer = { status: number; retryAfter?: string } | undefined;

const open: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close().catch(() => undefined);
});

/** Reads the status until `wanted` holds; returns the status that did. */
async function statusWhen(
  read: () => Promise<Json | undefined>,
  wanted: (status: Json | undefined) => boolean,
): Promise<Json | undefined> {
  let status: Json | undefined;
  await until(async () => {
    status = await read();
    return wanted(status);
  });
  return status;
}

async function outbox(db: Database): Promise<Database<DeliveryTables & EventsTables>> {
  await migrate(db, [deliveryMigrations, eventsMigrations]);
  return db as unknown as Database<DeliveryTables & EventsTables>;
}

forEachEngine({ describe, beforeAll, afterAll }, (fixture) => {
  it("the AI SDK's refresh shows throttled and retryAfterMs while its receiver answers 429 with Retry-After; the next success clears them", async () => {
    const store = await outbox((await fixture.createDatabase()).db);
    const app = await createExampleApp({
      allowLoopbackWebhooks: true,
      tuning: { pushIntervalMs: 60_000, webhook: { minTtlMs: 500, retry: RETRY, store, sealer } },
    });
    const { url, server } = await listenExample(app);
    open.push(async () => {
      server.closeAllConnections();
      server.close();
      await app.close();
    });
    const subscriptions = new MemoryEventStore();
    const received: Experimental_MCPEvent[] = [];
    const receiver = createMCPEventWebhook({
      store: subscriptions,
      onEvent: async ({ event }) => {
        received.push(event);
      },
    });
    let answer: Answer;
    const hooks = await serveFetch((request) =>
      answer === undefined
        ? receiver(request)
        : new Response(null, {
            status: answer.status,
            headers: answer.retryAfter === undefined ? {} : { "retry-after": answer.retryAfter },
          }),
    );
    open.push(hooks.close);
    const client = await createMCPClient({
      transport: { type: "http", url, headers: { authorization: "Bearer dev-token" } },
      experimental_events: { store: subscriptions },
    });
    open.push(() => client.close());

    const { id } = await client.experimental_events.subscribe({
      name: "order.placed",
      delivery: { mode: "webhook", url: `${hooks.url}/hooks`, allowInsecureLocalhost: true },
    });
    const statusOnRefresh = async () =>
      ((await client.experimental_events.refresh({ id })) as { deliveryStatus?: Json }).deliveryStatus;

    answer = { status: 429, retryAfter: String(RETRY_AFTER_S) };
    app.book.place("ada", "kettle");
    app.events.wake("order.placed");
    let status = await statusWhen(statusOnRefresh, (s) => s?.throttled === true);
    expect(status).toMatchObject({ active: true, lastError: "http_4xx", throttled: true });
    // Longer than the schedule's own delay: the receiver's Retry-After is what is waited for.
    expect(status?.retryAfterMs).toBeGreaterThan(300);
    expect(status?.retryAfterMs).toBeLessThanOrEqual(RETRY_AFTER_S * 1000);
    expect(received).toHaveLength(0);

    answer = undefined;
    await until(() => received.length === 1, 20_000);
    expect(received[0]).toMatchObject({ eventId: "order_1", data: { item: "kettle" } });
    status = await statusWhen(statusOnRefresh, (s) => s?.lastError === null);
    expect(status).toEqual({ active: true, lastDeliveryAt: expect.any(String), lastError: null });
  });

  it("a sketch client sees the failure without SEP-3415's fields; a 500 is not throttling, a 503 with Retry-After is", async () => {
    const store = await outbox((await fixture.createDatabase()).db);
    const events = await createEventsServer({
      webhook: { policy: developmentPolicy(), allowAnonymous: true, retry: RETRY, store, sealer },
    });
    events.event(emailReceived(newHooks()));
    const http = await serveEvents(events);
    open.push(async () => {
      await http.close();
      await events.close();
    });
    // A plain receiver: echoes the challenge, answers events as told.
    let answer: Answer = { status: 500 };
    let delivered = 0;
    let challenges = 0;
    const hook = await listen(
      createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on("data", (chunk: Buffer) => chunks.push(chunk));
        req.on("end", () => {
          // Not a receiver document (GET) either: the challenge decides.
          if (req.method !== "POST") return res.writeHead(404).end();
          const json = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Json;
          const challenge = json.type === "verification" ? json.challenge : (json.data as Json)?.challenge;
          if (typeof challenge === "string") {
            challenges++;
            res.writeHead(200, { "content-type": "application/json" });
            return res.end(JSON.stringify({ challenge }));
          }
          if (answer === undefined) {
            delivered++;
            return res.writeHead(204).end();
          }
          res.writeHead(
            answer.status,
            answer.retryAfter === undefined ? {} : { "retry-after": answer.retryAfter },
          );
          res.end();
        });
      }),
    );
    open.push(hook.close);

    const session = await RawSession.open(http.url);
    const params = (dialect: "sketch" | "sep-3415") =>
      dialect === "sketch"
        ? {
            id: "f47ac10b-58cc-4372-a567-0e02b2c3d479",
            name: "email.received",
            params: {},
            delivery: { mode: "webhook", url: `${hook.url}/hooks/sketch`, secret: generateSecret() },
            cursor: null,
          }
        : {
            name: "email.received",
            arguments: {},
            delivery: { mode: "webhook", url: `${hook.url}/hooks/sep`, secret: generateSecret() },
            cursor: null,
          };
    const sketch = params("sketch");
    const sep = params("sep-3415");
    let requestId = 10;
    const statusOf = async (subscribe: Json) => {
      const { result } = await session.request(requestId++, "events/subscribe", subscribe);
      return (result as { deliveryStatus?: Json }).deliveryStatus;
    };
    await statusOf(sketch);
    await statusOf(sep);

    emitEmail(events, "evt_1", "ada@example.com");
    const sepStatus = () => statusOf(sep);
    let status = await statusWhen(sepStatus, (s) => s?.lastError === "http_5xx");
    expect(status).not.toHaveProperty("throttled");
    expect(status).not.toHaveProperty("retryAfterMs");

    answer = { status: 503, retryAfter: String(RETRY_AFTER_S) };
    status = await statusWhen(sepStatus, (s) => s?.throttled === true);
    expect(status).toMatchObject({ lastError: "http_5xx", throttled: true });
    expect(status?.retryAfterMs).toBeGreaterThan(300);
    // The same moment as a sketch client reads it: its deliveryStatus has no such fields.
    const sketchStatus = await statusOf(sketch);
    expect(sketchStatus).toMatchObject({ active: true, lastError: "http_5xx" });
    expect(Object.keys(sketchStatus ?? {}).sort()).toEqual(
      ["active", "failedSince", "lastDeliveryAt", "lastError"].sort(),
    );

    answer = undefined;
    await until(() => delivered === 2, 20_000);
    status = await statusWhen(sepStatus, (s) => s?.lastError === null);
    expect(status).toEqual({ active: true, lastDeliveryAt: expect.any(String), lastError: null });
    // Refreshing with the secret already in force is not a rotation: no challenge after the first.
    expect(challenges).toBe(2);
  });
});
