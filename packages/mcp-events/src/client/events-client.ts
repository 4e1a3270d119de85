/**
 * The MCP Events client (sketch, "Client SDK Guidance"): discover event types with `list()`,
 * `subscribe()` to one and iterate its events, whatever the delivery mode underneath.
 *
 * ```ts
 * const events = new EventsClient({ client, store: await createFileCursorStore(".events.json") });
 * const sub = await events.subscribe("email.received", { from: "*@example.com" });
 * for await (const event of sub) console.log(event.name, event.data);
 * ```
 */

import { decodeSecret } from "@doorbell/webhooks";
import type { Client } from "@modelcontextprotocol/client";
import type { EventsDialect } from "../protocol/dialect.js";
import { EVENTS_METHODS } from "../protocol/methods.js";
import type { DeliveryMode, EventDescriptor, JsonObject } from "../protocol/model.js";
import { type Connect, Connection } from "./connection.js";
import type { Timing, WebhookSetup } from "./context.js";
import { DialectChoice, type DialectOption } from "./dialect-choice.js";
import { EventsClientError } from "./errors.js";
import { subscriptionKey } from "./key.js";
import { deliveryCandidates } from "./mode.js";
import type { SubscriptionNotice } from "./notices.js";
import { StreamRouter } from "./router.js";
import { type CursorStore, createMemoryCursorStore } from "./store/store.js";
import { type EventsSubscription, Subscription } from "./subscription.js";
import { systemTimers, type Timers } from "./timers.js";
import { EventsWebhookReceiver } from "./webhook/receiver.js";
import { call } from "./wire.js";

/** Webhook delivery: where the server can reach this client, and how secrets are made. */
export interface WebhookConfig {
  /**
   * The public base URL that reaches `events.receiver` (directly or through a proxy). Each
   * subscription gets `<url>/<random route>`; mount the receiver so it sees those paths.
   */
  url: string;
  /**
   * `server` (the sketch's default), `client` (a `whsec_` made here; SEP-3415 always does this,
   * whatever is set here), or a `whsec_…` secret provisioned elsewhere (a vault): every
   * subscription of this client then signs with it.
   */
  secret?: "server" | "client" | `whsec_${string}`;
  /** SEP-3415: the subscription TTL to ask for. */
  ttlMs?: number;
  /** How long a delivery waits for an `events/subscribe` in flight to name its secret (default 10 s). */
  pendingSecretWaitMs?: number;
  /** The receiver's timestamp tolerance (default ±300 s). */
  toleranceSeconds?: number;
}

export interface EventsClientOptions {
  /** A connected SDK Client; or give `connect` so a lost connection can be replaced. */
  client?: Client;
  /** Makes a new connected Client: used first, and again after a server restart or a dropped session. */
  connect?: Connect;
  /**
   * The wire dialect to speak. Left out, each connection's era decides: SEP-3415 on 2026-07-28
   * (`server/discover`), the design sketch on 2025-11-25.
   */
  dialect?: DialectOption;
  /** Where cursors (and webhook ids and secrets) persist; default in memory. */
  store?: CursorStore;
  /** Separates the records of different servers sharing one store (default "default"). */
  scope?: string;
  webhook?: WebhookConfig;
  /** Whether push (`events/stream`) may be chosen (default true: stdio and Streamable HTTP stream). */
  push?: boolean;
  /** Least time between polls (default 1000 ms, the sketch's floor). */
  pollFloorMs?: number;
  /** Silence after which a push stream is reopened (default 60 s: twice the 30 s heartbeat). */
  heartbeatWindowMs?: number;
  /** Timeout of poll, subscribe and list requests (default 60 s). */
  requestTimeoutMs?: number;
  /** `maxEvents` sent with each poll. */
  maxEvents?: number;
  timers?: Timers;
  /** Called with every subscription's notices (gaps, mode, reconnects, delivery status). */
  onNotice?: (notice: SubscriptionNotice, subscription: EventsSubscription) => void;
}

export interface SubscribeOptions {
  /** Force a delivery mode; refused with ERR_EVENTS_DELIVERY_MODE_UNAVAILABLE when impossible. */
  delivery?: DeliveryMode;
  onNotice?: (notice: SubscriptionNotice) => void;
}

export class EventsClient {
  /** The webhook endpoint, when a WebhookConfig is set: mount `receiver.fetch` or `receiver.node`. */
  readonly receiver: EventsWebhookReceiver | undefined;
  readonly #dialects: DialectChoice;
  #lastClient: Client | undefined;
  readonly #connection: Connection;
  readonly #router: StreamRouter;
  readonly #store: CursorStore;
  readonly #scope: string;
  readonly #timers: Timers;
  readonly #timing: Timing;
  readonly #webhook: WebhookSetup | undefined;
  readonly #push: boolean;
  readonly #onNotice: EventsClientOptions["onNotice"];
  readonly #active = new Map<string, Subscription>();
  #catalogue: Map<string, EventDescriptor> | undefined;
  #closed = false;

  constructor(options: EventsClientOptions) {
    const dialects = new DialectChoice(options.dialect);
    this.#dialects = dialects;
    this.#timers = options.timers ?? systemTimers;
    this.#router = new StreamRouter(
      (client) => dialects.for(client),
      () => {
        this.#catalogue = undefined;
      },
    );
    this.#connection = new Connection(options, (client) => {
      this.#lastClient = client;
      this.#router.install(client);
    });
    this.#store = options.store ?? createMemoryCursorStore();
    this.#scope = options.scope ?? "default";
    this.#push = options.push ?? true;
    this.#onNotice = options.onNotice;
    this.#timing = {
      pollFloorMs: positive(options.pollFloorMs ?? 1_000, "pollFloorMs"),
      heartbeatWindowMs: positive(options.heartbeatWindowMs ?? 60_000, "heartbeatWindowMs"),
      requestTimeoutMs: positive(options.requestTimeoutMs ?? 60_000, "requestTimeoutMs"),
      maxEvents: options.maxEvents,
    };
    if (options.webhook) {
      const config = options.webhook;
      let parsed: URL;
      try {
        parsed = new URL(config.url);
      } catch {
        throw new EventsClientError("ERR_EVENTS_INVALID_ARGUMENT", "webhook.url is not an absolute URL");
      }
      if (parsed.protocol !== "https:" && parsed.protocol !== "http:") {
        throw new EventsClientError("ERR_EVENTS_INVALID_ARGUMENT", "webhook.url must be http(s)");
      }
      if (config.secret !== undefined && config.secret !== "server" && config.secret !== "client") {
        try {
          decodeSecret(config.secret);
        } catch {
          throw new EventsClientError(
            "ERR_EVENTS_INVALID_ARGUMENT",
            "webhook.secret must be whsec_ followed by base64 of 24 to 64 bytes",
          );
        }
      }
      this.receiver = new EventsWebhookReceiver({
        clock: () => this.#timers.now(),
        ...(config.pendingSecretWaitMs === undefined
          ? {}
          : { pendingSecretWaitMs: config.pendingSecretWaitMs }),
        ...(config.toleranceSeconds === undefined ? {} : { toleranceSeconds: config.toleranceSeconds }),
      });
      this.#webhook = {
        url: parsed.href,
        receiver: this.receiver,
        // On SEP-3415 the webhook driver makes the secret here whatever this says.
        secret: config.secret ?? (dialects.fixed?.name === "sep-3415" ? "client" : "server"),
        ...(config.ttlMs === undefined ? {} : { ttlMs: config.ttlMs }),
      };
    }
  }

  /**
   * The dialect spoken: the one given in the options, else the one the era of the latest
   * connection implies; undefined until the first connection when it follows the era.
   */
  get dialect(): EventsDialect | undefined {
    return this.#dialects.fixed ?? (this.#lastClient ? this.#dialects.for(this.#lastClient) : undefined);
  }

  /** Every event type the server lists (all pages); cached until `notifications/events/list_changed`. */
  async list(): Promise<EventDescriptor[]> {
    const client = await this.#connection.get();
    const dialect = this.#dialects.for(client);
    const all: EventDescriptor[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 1_000; page++) {
      const params = dialect.list.params.encode(cursor === undefined ? {} : { cursor });
      const result = await call(client, dialect, EVENTS_METHODS.list, params, dialect.list.result.decode, {
        timeout: this.#timing.requestTimeoutMs,
      });
      all.push(...result.events);
      if (result.nextCursor === undefined || result.nextCursor === cursor) break;
      cursor = result.nextCursor;
    }
    this.#catalogue = new Map(all.map((descriptor) => [descriptor.name, descriptor]));
    return all;
  }

  /**
   * Subscribes to `name` with `params` and resolves once the first step succeeded (the bootstrap
   * poll, the stream's `active`, the webhook subscribe). Iterate the result for events.
   */
  async subscribe(
    name: string,
    params: JsonObject = {},
    options: SubscribeOptions = {},
  ): Promise<EventsSubscription> {
    if (this.#closed) throw new EventsClientError("ERR_EVENTS_CLOSED", "the events client is closed");
    if (typeof name !== "string" || name.length === 0) {
      throw new EventsClientError("ERR_EVENTS_INVALID_ARGUMENT", "an event name is a non-empty string");
    }
    if (typeof params !== "object" || params === null || Array.isArray(params)) {
      throw new EventsClientError("ERR_EVENTS_INVALID_ARGUMENT", "params is a JSON object");
    }
    const descriptor = await this.#describe(name);
    const candidates = deliveryCandidates(
      name,
      descriptor.delivery,
      { webhook: this.#webhook !== undefined, push: this.#push },
      options.delivery,
    );
    const key = subscriptionKey(this.#scope, name, params);
    if (this.#active.has(key)) {
      throw new EventsClientError(
        "ERR_EVENTS_INVALID_ARGUMENT",
        `this client is already subscribed to ${name} with these params; cancel that subscription first`,
      );
    }
    const record = (await this.#readRecord(key)) ?? { cursor: null };
    let subscription: Subscription | undefined;
    const onNotice = (notice: SubscriptionNotice) => {
      options.onNotice?.(notice);
      if (subscription) this.#onNotice?.(notice, subscription);
    };
    subscription = new Subscription({
      key,
      name,
      params: structuredClone(params),
      dialects: this.#dialects,
      connection: this.#connection,
      router: this.#router,
      store: this.#store,
      record,
      timers: this.#timers,
      timing: this.#timing,
      webhook: this.#webhook,
      onNotice,
      onEnd: () => {
        if (this.#active.get(key) === subscription) this.#active.delete(key);
      },
    });
    this.#active.set(key, subscription);
    await subscription.start(candidates);
    return subscription;
  }

  /** Stops every subscription, keeping their cursors for the next run; closes a connection it made. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([...this.#active.values()].map((subscription) => subscription.close()));
    await this.#connection.close();
    await this.#store.close?.();
  }

  async #describe(name: string): Promise<EventDescriptor> {
    let descriptor = this.#catalogue?.get(name);
    if (!descriptor) {
      await this.list();
      descriptor = this.#catalogue?.get(name);
    }
    if (!descriptor) {
      throw new EventsClientError(
        "ERR_EVENTS_EVENT_NOT_FOUND",
        `the server lists no event type ${JSON.stringify(name.slice(0, 100))}`,
      );
    }
    return descriptor;
  }

  async #readRecord(key: string) {
    try {
      return await this.#store.get(key);
    } catch (error) {
      if (error instanceof EventsClientError) throw error;
      throw new EventsClientError("ERR_EVENTS_STATE", "the cursor store could not be read", {}, error);
    }
  }
}

function positive(value: number, name: string): number {
  if (!Number.isFinite(value) || value <= 0) {
    throw new EventsClientError(
      "ERR_EVENTS_INVALID_ARGUMENT",
      `${name} must be a positive number of milliseconds`,
    );
  }
  return value;
}
