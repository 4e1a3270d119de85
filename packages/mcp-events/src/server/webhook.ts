import {
  createDeliveryEngine,
  type DeliveryEngine,
  type DeliveryEvent,
  type DeliveryTables,
  deliveryMigrations,
  type RetryPolicy,
  type SubscriptionView,
  showDelivery,
  type Worker,
} from "@doorbell/delivery";
import {
  asTables,
  createSealer,
  type Database,
  generateKeyEntry,
  Keyring,
  type Kysely,
  migrate,
  openDatabase,
  type Sealer,
} from "@doorbell/store";
import { checkUrl, decodeSecret, type EgressPolicy, generateSecret, getJson } from "@doorbell/webhooks";
import {
  type DeliveryStatus,
  dialect,
  type EventOccurrence,
  type EventsDialect,
  EventsError,
  type JsonObject,
  type SubscribeOutcome,
} from "../protocol/index.js";
import { canonicalJson, digest } from "./canonical.js";
import {
  authorize,
  type CallContext,
  type Core,
  resolve,
  runCheck,
  serialized,
  shape,
  wireError,
  wireOf,
  youngEnough,
} from "./core.js";
import { failureCategory } from "./failure-category.js";
import type { AnyEventDefinition, SubscriptionContext } from "./types.js";
import {
  type EventsTables,
  eventsMigrations,
  type WebhookSubscriptionRow,
  webhookRows,
} from "./webhook-store.js";

export interface WebhookOptions {
  /** Where deliveries may go: `productionPolicy()` in production, `developmentPolicy()` for loopback. */
  policy: EgressPolicy;
  /** The subscription TTL: `refreshBefore` is this far from each (re)subscribe (default 30 min). */
  ttlMs?: number;
  /**
   * A store migrated with `eventsMigrations` and `deliveryMigrations`, and its sealer: the
   * subscriptions and their outbox live there, shared by every process on the same database and
   * kept across restarts. Without one the events server owns an in-memory SQLite database (one
   * process, gone with it: soft state, as the sketch allows).
   */
  store?: Database<DeliveryTables & EventsTables>;
  sealer?: Sealer;
  /**
   * The delivery engine already running on `store` (its owner runs the worker, with the per-channel
   * rules of `@doorbell/delivery`); without one the events server makes its own.
   */
  engine?: DeliveryEngine;
  /** How long `events/subscribe` waits for the endpoint to echo the challenge (default 10 s). */
  verifyTimeoutMs?: number;
  /** How each event is retried (default: the engine's MCP Events policy). */
  retry?: RetryPolicy;
  /** Run a delivery worker in this process (default: true unless `engine` is given). */
  worker?: boolean;
  /**
   * Webhook subscriptions need an authenticated principal (SEP-3415; `Forbidden` otherwise).
   * `true` lets anonymous callers subscribe too, keyed as one shared principal: for local
   * development and closed networks only.
   */
  allowAnonymous?: boolean;
  /** The shortest TTL a client may ask for with `ttlMs` (default 1 s); the longest is `ttlMs`. */
  minTtlMs?: number;
  /**
   * Accept a receiver's `/.well-known/mcp-webhook-receiver.json` (`{"receivers": ["/hooks/"]}`)
   * as verification of the callbacks under the paths it lists, instead of a challenge (default true).
   */
  receiverDocument?: boolean;
}

export { type EventsTables, eventsMigrations } from "./webhook-store.js";

type Tables = DeliveryTables & EventsTables;

// One database holds both packages' tables; each package's statements see only their own.
const subscriptionsIn = (db: Kysely<Tables>) => asTables<EventsTables>(db);
const deliveriesIn = (db: Kysely<Tables>) => asTables<DeliveryTables>(db);

/** How long a receiver document's answer is trusted, per (principal, url). */
const RECEIVER_DOCUMENT_TTL_MS = 10 * 60_000;
const RECEIVER_DOCUMENT = "/.well-known/mcp-webhook-receiver.json";
const MIN_ID_LENGTH = 16;
/** Rows one process takes per interval pass. */
const CLAIM_LIMIT = 500;

type WebhookChannel = "mcp" | "mcp-standard";

/**
 * The delivery channel a subscriber's dialect signs with: the sketch's X-MCP-* (`mcp`), or SEP-3415's
 * Standard Webhooks headers and bodies (`mcp-standard`). Both follow the same MCP delivery rules.
 */
export function channelOf(wire: EventsDialect): WebhookChannel {
  return wire.signature === "standard" ? "mcp-standard" : "mcp";
}

/** An event as the delivery engine queues it. */
function deliveryOf(event: EventOccurrence): DeliveryEvent {
  return {
    type: event.name,
    eventId: event.eventId,
    timestamp: event.timestamp,
    data: event.data,
    ...(event.cursor === undefined || event.cursor === null ? {} : { cursor: event.cursor }),
  };
}

/** A stored subscription with what this process knows of its type. */
interface Served {
  row: WebhookSubscriptionRow;
  def: AnyEventDefinition;
  params: JsonObject;
  ctx: SubscriptionContext;
  wire: EventsDialect;
}

/**
 * `events/subscribe` and `events/unsubscribe`, with the subscriptions in the database
 * (webhook-store.ts) and deliveries through `@doorbell/delivery`'s MCP channels: "mcp" (X-MCP-*
 * signatures) for sketch subscribers, "mcp-standard" (Standard Webhooks, SEP-3415 bodies) for
 * SEP-3415 ones; both with the verification challenge, per-event retries, suspension and
 * `deliveryStatus`.
 *
 * Feeding a check function's events: any process may run a subscription's check, when it is woken
 * (`wake`, told by the author that the upstream changed, in whichever process heard of it) or when
 * the row's interval check falls due (`claimDue` hands each due row to one process). The events a
 * check returns are queued in the same transaction that moves the stored cursor from where the
 * check started, and only if nobody moved it meanwhile: when several processes are woken by the
 * same change, one queues the events and the others' transactions change nothing.
 */
export class WebhookMode {
  /** Receiver-document verdicts per (principal, url), until they expire. */
  private readonly documented = new Map<string, { listed: boolean; until: number }>();
  /** One feed run at a time per subscription in this process (a wake during a run asks for one more). */
  private readonly feeds = new Map<string, () => Promise<void>>();
  private readonly running = new Set<Promise<void>>();
  /** Emitted events waiting for this tick's one transaction (an emit fans out to many subscriptions). */
  private pending: { def: AnyEventDefinition; event: EventOccurrence; target?: string }[] = [];
  /** Batches are written one after another, so each subscription's events keep their order. */
  private flushed: Promise<void> = Promise.resolve();
  private engine!: DeliveryEngine;
  private store!: Database<Tables>;
  private sealer!: Sealer;
  private ownsStore = false;
  private worker: Worker | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  readonly ttlMs: number;

  constructor(
    private readonly core: Core,
    private readonly options: WebhookOptions,
  ) {
    this.ttlMs = options.ttlMs ?? 30 * 60 * 1000;
  }

  async start(): Promise<void> {
    if (this.options.store) {
      if (!this.options.sealer) throw new Error("webhook.store needs webhook.sealer");
      this.store = this.options.store;
      this.sealer = this.options.sealer;
    } else {
      this.store = await openDatabase<Tables>(":memory:");
      await migrate(this.store, [deliveryMigrations, eventsMigrations]);
      this.sealer = createSealer(new Keyring([generateKeyEntry()]));
      this.ownsStore = true;
    }
    this.engine =
      this.options.engine ??
      createDeliveryEngine({
        store: asTables<DeliveryTables>(this.store),
        sealer: this.sealer,
        policy: this.options.policy,
        clock: this.core.clock,
        logger: this.core.log,
        ...(this.options.retry ? { events: { retry: this.options.retry } } : {}),
      });
    if (this.options.worker ?? this.options.engine === undefined) {
      this.worker = this.engine.worker();
      this.worker.start();
    }
    this.timer = setInterval(() => void this.tick(), this.core.settings.pushIntervalMs);
    this.timer.unref();
  }

  private get db(): Kysely<Tables> {
    return this.store.db;
  }

  /** The delivery engine, e.g. for `runDue()` in tests with a fake clock. */
  get delivery(): DeliveryEngine {
    return this.engine;
  }

  async subscribe(raw: unknown, call: CallContext): Promise<JsonObject> {
    const wire = wireOf(this.core, raw, call);
    const query = wire.subscribe.params.decode(raw);
    const principal = this.core.principalOf(call);
    if (principal === undefined && this.options.allowAnonymous !== true)
      throw new EventsError("Unauthorized", {
        reason: "Webhook subscriptions need an authenticated principal",
      });
    const paramsKey = canonicalJson(query.params);
    if (query.id !== undefined && query.id.length < MIN_ID_LENGTH)
      throw new EventsError(
        "InvalidParams",
        { field: "id" },
        `Invalid events/subscribe params: id must carry at least 122 bits (use a UUIDv4)`,
      );
    // The sketch keys by the client's id; SEP-3415 derives the id from what the subscription is.
    const id = query.id ?? `sub_${digest(principal ?? "", query.url, query.name, paramsKey)}`;
    const key = digest(principal ?? "", query.url, id);
    if (query.secret !== undefined) {
      try {
        decodeSecret(query.secret);
      } catch {
        throw new EventsError(
          "InvalidParams",
          { field: "delivery.secret" },
          "Invalid events/subscribe params: delivery.secret must be whsec_ followed by base64 of 24 to 64 bytes",
        );
      }
    }
    this.checkCallbackUrl(query.url);
    const { def, params, ctx } = await resolve(this.core, query, "webhook", call, id);

    const request: Request_ = {
      wire,
      principal,
      id,
      key,
      paramsKey,
      url: query.url,
      secret: query.secret,
      cursor: query.cursor,
      maxAgeMs: query.maxAgeMs,
      refreshBefore: this.core.clock() + this.ttlFor(query.ttlMs),
      def,
      params,
      ctx,
    };
    for (let attempt = 0; ; attempt++) {
      const existing = await webhookRows.find(subscriptionsIn(this.db), key);
      if (existing) {
        const view = await this.engine
          .get(deliveriesIn(this.store.db), existing.delivery_id)
          .catch(() => undefined);
        const same =
          view !== undefined &&
          view.status !== "ended" &&
          existing.terminated === 0 &&
          existing.channel === channelOf(wire) &&
          existing.name === def.name &&
          existing.params === paramsKey;
        if (same) return this.refresh(existing, view, request);
        // Different name, params or wire under the same key address a new subscription: the old one goes.
        await this.release(existing, "replaced");
      }
      const made = await this.create(request);
      if (made !== undefined) return made;
      // Another process made the same subscription meanwhile: refresh the one that stands.
      if (attempt > 2) throw new Error("events/subscribe: the subscription kept changing under this request");
    }
  }

  async unsubscribe(raw: unknown, call: CallContext): Promise<JsonObject> {
    const wire = wireOf(this.core, raw, call);
    const query = wire.unsubscribe.params.decode(raw);
    const principal = this.core.principalOf(call);
    const id =
      query.id ??
      `sub_${digest(principal ?? "", query.url, query.name ?? "", canonicalJson(query.params ?? {}))}`;
    const row = await webhookRows.find(subscriptionsIn(this.db), digest(principal ?? "", query.url, id));
    if (!row) throw new EventsError("SubscriptionNotFound", { id });
    await this.release(row, "unsubscribed");
    return wire.unsubscribe.result.encode({});
  }

  /**
   * The URL itself is the client's to get right (InvalidParams: not absolute, not https, a user
   * name in it); where it points is the endpoint's problem (CallbackEndpointError).
   */
  private checkCallbackUrl(url: string): void {
    const verdict = checkUrl(url, this.options.policy);
    if (verdict.ok) return;
    let malformed = false;
    try {
      const parsed = new URL(url);
      malformed =
        !(this.options.policy.protocols as readonly string[]).includes(parsed.protocol) ||
        parsed.username !== "" ||
        parsed.password !== "";
    } catch {
      malformed = true;
    }
    if (malformed)
      throw new EventsError(
        "InvalidParams",
        { field: "delivery.url" },
        `Invalid events/subscribe params: delivery.url: ${verdict.reason}`,
      );
    throw new EventsError("InvalidCallbackUrl", { reason: verdict.reason });
  }

  /**
   * Refresh: TTL reset, delivery reactivated, secret rotated when a different one is supplied
   * (deployed clients send the same secret on every refresh: re-proving it by a challenge would
   * only risk ending the subscription while the receiver is busy); the cursor is a no-op.
   * deliveryStatus as it was: `active: false` tells the client this refresh just resumed it.
   */
  private async refresh(
    row: WebhookSubscriptionRow,
    before: SubscriptionView,
    request: Request_,
  ): Promise<JsonObject> {
    const rotated = request.secret !== undefined && !this.sameSecret(row, request.secret);
    await this.engine.renew(deliveriesIn(this.store.db), row.delivery_id, {
      expiresAt: request.refreshBefore,
      refreshBefore: request.refreshBefore,
      ...(rotated ? { secret: request.secret } : {}),
    });
    await webhookRows.update(subscriptionsIn(this.db), row.key, {
      refresh_before: request.refreshBefore,
      reported: null,
      updated_at: this.core.clock(),
      ...(rotated ? { secret_check: this.secretCheck(row.key, request.secret as string) } : {}),
    });
    const outcome: SubscribeOutcome = {
      id: request.id,
      refreshBefore: new Date(request.refreshBefore).toISOString(),
      cursor: row.cursor,
      deliveryStatus: await this.status(before),
      truncated: false,
    };
    return request.wire.subscribe.result.encode(outcome);
  }

  /** A new subscription; undefined when another process made the same one first. */
  private async create(request: Request_): Promise<JsonObject | undefined> {
    const { wire, principal, def, params, ctx } = request;
    await this.checkLimit(principal);
    const secret = request.secret ?? generateSecret();
    const ownerUrl = digest(principal ?? "", request.url);
    const preverified =
      (await this.verifiedBefore(ownerUrl)) ||
      (await this.listedByReceiverDocument(principal ?? "", request.url));
    const created = await this.engine.subscribe(deliveriesIn(this.store.db), {
      channel: channelOf(wire),
      url: request.url,
      secret,
      expiresAt: request.refreshBefore,
      refreshBefore: request.refreshBefore,
      requiresApproval: false,
      subscriberId: request.id,
      preverified,
    });
    // A client-supplied secret lets the endpoint verify the challenge now, so subscribe waits for
    // it (CallbackEndpointError when it fails, saying how). A server-generated secret reaches the
    // client only in this response: the challenge then completes afterwards (the receiver answers
    // 503 until it knows the secret) and nothing is delivered before it passes.
    if (!preverified && request.secret !== undefined) {
      const failure = await this.verification(created.id);
      if (failure !== undefined) {
        await this.engine.end(deliveriesIn(this.store.db), created.id, "challenge_failed", { notify: false });
        throw new EventsError("InvalidCallbackUrl", { reason: failure });
      }
    }
    const now = this.core.clock();
    const row: WebhookSubscriptionRow = {
      key: request.key,
      id: request.id,
      owner_url: ownerUrl,
      delivery_id: created.id,
      channel: channelOf(wire),
      dialect: wire.name,
      name: def.name,
      params: request.paramsKey,
      principal: principal ?? null,
      topic: def.topic ? await def.topic(ctx, params) : null,
      refresh_before: request.refreshBefore,
      secret_check: this.secretCheck(request.key, secret),
      cursor: request.cursor,
      reported: null,
      truncated: 0,
      terminated: 0,
      feed_due_at: now + this.core.settings.pushIntervalMs,
      authorized_at: now,
      created_at: now,
      updated_at: now,
    };
    if (!(await webhookRows.insert(subscriptionsIn(this.db), row))) {
      await this.engine.end(deliveriesIn(this.store.db), created.id, "replaced", { notify: false });
      return undefined;
    }
    try {
      await def.onSubscribe?.(ctx, params, request.id);
    } catch (error) {
      await this.release(row, "refused");
      throw error;
    }
    const served: Served = { row, def, params, ctx, wire };
    // The first check runs now, so the answer's cursor and `truncated` are already known.
    if (def.check) await this.feedOf(row.key, request.maxAgeMs)();
    else await this.replayBuffer(served, request.maxAgeMs);
    const fresh = (await webhookRows.find(subscriptionsIn(this.db), row.key)) ?? row;
    const outcome: SubscribeOutcome = {
      id: request.id,
      refreshBefore: new Date(request.refreshBefore).toISOString(),
      cursor: fresh.cursor,
      truncated: fresh.truncated === 1,
      ...(request.secret === undefined ? { secret } : {}),
    };
    return wire.subscribe.result.encode(outcome);
  }

  /** TooManySubscriptions, counting the stored webhook subscriptions with this process's others. */
  private async checkLimit(principal: string | undefined): Promise<void> {
    this.core.live.checkLimit(principal);
    const limits = this.core.settings.limits;
    if (limits.perPrincipal !== undefined) {
      const mine = await webhookRows.countFor(subscriptionsIn(this.db), principal ?? null);
      if (mine >= limits.perPrincipal)
        throw new EventsError("TooManySubscriptions", {
          limit: "subscriptions per principal",
          max: limits.perPrincipal,
        });
    }
    if (limits.total !== undefined) {
      const all = (await webhookRows.count(subscriptionsIn(this.db))) + this.core.live.size;
      if (all >= limits.total)
        throw new EventsError("TooManySubscriptions", { limit: "subscriptions", max: limits.total });
    }
  }

  private secretCheck(key: string, secret: string): string {
    return this.sealer.seal(digest(secret), `events.webhook.secret:${key}`);
  }

  private sameSecret(row: WebhookSubscriptionRow, secret: string): boolean {
    try {
      return this.sealer.openText(row.secret_check, `events.webhook.secret:${row.key}`) === digest(secret);
    } catch {
      return false;
    }
  }

  /**
   * The TTL granted: the client's `ttlMs` within [minTtlMs, the server's ttlMs]. `null` (no
   * expiry) gets the server's longest, which a refresh extends (docs/decisions.md).
   */
  private ttlFor(asked: number | null | undefined): number {
    if (asked === undefined || asked === null) return this.ttlMs;
    return Math.min(this.ttlMs, Math.max(this.options.minTtlMs ?? 1_000, asked));
  }

  /** The stored subscriptions, of every process. */
  async count(): Promise<number> {
    return webhookRows.count(subscriptionsIn(this.db));
  }

  /** Subscriptions whose TTL lapsed without a refresh end (in whichever process looks first). */
  async sweep(now: number): Promise<void> {
    for (const row of await webhookRows.expired(subscriptionsIn(this.db), now))
      await this.release(row, "expired");
  }

  /** Delivery-time re-check of every stored webhook subscription. */
  async recheck(): Promise<void> {
    for (const row of await webhookRows.all(subscriptionsIn(this.db))) {
      if (row.terminated === 1) continue;
      await this.reauthorize(row);
    }
  }

  /**
   * The upstream of `name` changed: the check of its subscriptions (of the `topic`s given, or one
   * subscription) runs now in this process. Every process that hears of a change runs it; the
   * cursor's compare-and-set lets only one of them queue what it finds.
   */
  async wake(
    name: string,
    target: { subscriptionId?: string; topic?: string | readonly string[] } = {},
  ): Promise<void> {
    if (this.closed) return;
    try {
      const rows =
        target.subscriptionId !== undefined
          ? await webhookRows.byId(subscriptionsIn(this.db), target.subscriptionId)
          : await webhookRows.live(subscriptionsIn(this.db), name, target.topic);
      await Promise.all(rows.filter((row) => row.name === name).map((row) => this.feedOf(row.key)()));
    } catch (error) {
      // The interval check catches up with what this wake could not read.
      this.core.log.warn({ event: name, err: (error as Error).message }, "webhook wake failed");
    }
  }

  /** One interval pass: the rows due for an unprompted check, taken by this process. */
  async tick(): Promise<void> {
    if (this.closed) return;
    const now = this.core.clock();
    try {
      const due = await webhookRows.claimDue(
        subscriptionsIn(this.db),
        this.store.dialect,
        now,
        now + this.core.settings.pushIntervalMs,
        CLAIM_LIMIT,
      );
      await Promise.all(
        due.map(async (row) => {
          if (now - row.authorized_at >= this.core.settings.reauthorizeMs && !(await this.reauthorize(row)))
            return;
          if (this.core.definition(row.name)?.check) await this.feedOf(row.key)();
        }),
      );
    } catch (error) {
      // Rows it did not get through fall due again at their next interval.
      this.core.log.warn({ err: (error as Error).message }, "webhook interval check failed");
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await Promise.all(this.running);
    // What was emitted before close is queued (a durable store delivers it after a restart).
    await new Promise<void>((resolveTurn) => queueMicrotask(resolveTurn));
    await this.flushed;
    await this.worker?.stop();
    if (this.ownsStore) await this.store.close();
  }

  /** Emitted events for the stored subscriptions of the type: queued with this turn's others in one transaction. */
  emitted(def: AnyEventDefinition, event: EventOccurrence, target?: string): void {
    if (this.closed) return;
    this.pending.push({ def, event, ...(target === undefined ? {} : { target }) });
    if (this.pending.length > 1) return;
    queueMicrotask(() => {
      const batch = this.pending;
      this.pending = [];
      this.flushed = this.flushed.then(() =>
        this.flushEmits(batch).catch((error: unknown) =>
          this.core.log.warn({ err: (error as Error).message }, "webhook enqueue failed"),
        ),
      );
    });
  }

  private async flushEmits(batch: typeof this.pending): Promise<void> {
    const rowsByName = new Map<string, WebhookSubscriptionRow[]>();
    const items: { served: Served; event: EventOccurrence }[] = [];
    for (const { def, event, target } of batch) {
      let rows = rowsByName.get(def.name);
      if (!rows) {
        rows = await webhookRows.live(subscriptionsIn(this.db), def.name);
        rowsByName.set(def.name, rows);
      }
      for (const row of rows) {
        if (target !== undefined && row.id !== target) continue;
        const served = this.servedOf(row, def);
        if (!served) continue;
        const shaped = target === undefined ? shape(served, event) : event;
        if (shaped) items.push({ served, event: shaped });
      }
    }
    if (items.length === 0) return;
    await this.store.transaction(async (trx) => {
      await this.enqueueAll(trx, items);
      const last = new Map<string, string>();
      for (const { served, event } of items)
        if (typeof event.cursor === "string") last.set(served.row.key, event.cursor);
      for (const [key, cursor] of last)
        await webhookRows.update(subscriptionsIn(trx), key, { cursor, updated_at: this.core.clock() });
    });
  }

  /** The subscription as this process can serve it; undefined for a type it does not declare. */
  private servedOf(row: WebhookSubscriptionRow, def = this.core.definition(row.name)): Served | undefined {
    if (!def) return undefined;
    let params = JSON.parse(row.params) as JsonObject;
    if (def.params) {
      const parsed = def.params.safeParse(params);
      if (!parsed.success) return undefined;
      params = parsed.data as JsonObject;
    }
    const ctx: SubscriptionContext = {
      subscriptionId: row.id,
      mode: "webhook",
      name: row.name,
      ...(row.principal === null ? {} : { principal: row.principal }),
    };
    return { row, def, params, ctx, wire: dialect(row.dialect, this.core.errorCodes) };
  }

  /** This process's one feed of a subscription (the first run may honour the subscribe's maxAgeMs). */
  private feedOf(key: string, maxAgeMs?: number): () => Promise<void> {
    let feed = this.feeds.get(key);
    if (!feed) {
      let first = maxAgeMs;
      feed = serialized(async () => {
        if (this.closed) return;
        const run = this.advance(key, first).catch((error: unknown) =>
          this.core.log.warn({ err: (error as Error).message }, "webhook check failed"),
        );
        first = undefined;
        this.running.add(run);
        try {
          await run;
        } finally {
          this.running.delete(run);
        }
      });
      this.feeds.set(key, feed);
    }
    return feed;
  }

  /**
   * Runs the check from the stored cursor and queues what it found, moving the cursor in the same
   * transaction if nobody moved it since it was read; again while the check says more wait.
   */
  private async advance(key: string, maxAgeMs?: number): Promise<void> {
    for (let more = true; more && !this.closed; ) {
      more = false;
      const row = await webhookRows.find(subscriptionsIn(this.db), key);
      if (!row || row.terminated === 1 || row.refresh_before <= this.core.clock()) {
        if (!row) this.feeds.delete(key);
        return;
      }
      const served = this.servedOf(row);
      if (!served?.def.check) return;
      const { def, ctx, params } = served;
      let expired: string | undefined;
      let batch: Awaited<ReturnType<typeof runCheck>> | undefined;
      try {
        batch = await runCheck(this.core, def, ctx, params, row.cursor, this.core.settings.maxMaxEvents);
      } catch (error) {
        if (!(error instanceof EventsError && error.kind === "CursorExpired")) throw error;
        expired = String(error.data?.reason ?? "Cursor expired");
      }
      const now = this.core.clock();
      if (expired !== undefined) {
        const fresh =
          (await runCheck(this.core, def, ctx, params, null, 1).catch(() => undefined))?.cursor ?? null;
        await this.store.transaction(async (trx) => {
          const moved = await webhookRows.advance(subscriptionsIn(trx), key, row.cursor, {
            cursor: fresh,
            truncated: 1,
            reported: "CursorExpired",
            updated_at: now,
          });
          if (moved) await this.gap(trx, served, fresh, expired as string);
        });
        return;
      }
      const found = batch as NonNullable<typeof batch>;
      const young = youngEnough(maxAgeMs, this.core.clock);
      const events = young ? found.events.filter(young) : found.events;
      if (events.length === 0 && found.cursor === row.cursor) return;
      await this.store.transaction(async (trx) => {
        const moved = await webhookRows.advance(subscriptionsIn(trx), key, row.cursor, {
          cursor: found.cursor,
          updated_at: now,
        });
        if (moved)
          await this.enqueueAll(
            trx,
            events.map((event) => ({ served, event })),
          );
      });
      more = found.hasMore;
    }
  }

  /**
   * Emit-only types: the emit buffer of this process from the subscribe's cursor (or, with
   * maxAgeMs, from the oldest event that young).
   */
  private async replayBuffer(served: Served, maxAgeMs?: number): Promise<void> {
    const { row, def } = served;
    const buffer = this.core.buffer;
    const mine = (entry: { target?: string; at: number }) =>
      (entry.target === undefined || entry.target === row.id) &&
      (maxAgeMs === undefined || entry.at >= this.core.clock() - maxAgeMs);
    const read =
      row.cursor === null
        ? maxAgeMs === undefined
          ? undefined
          : buffer.readRecent(def.name, Number.MAX_SAFE_INTEGER, mine)
        : buffer.read(def.name, row.cursor, Number.MAX_SAFE_INTEGER, mine);
    await this.store.transaction(async (trx) => {
      if (read === undefined || !read.ok) {
        await webhookRows.update(subscriptionsIn(trx), row.key, {
          cursor: buffer.now(),
          ...(read === undefined ? {} : { truncated: 1, reported: "CursorExpired" }),
        });
        if (read !== undefined && !read.ok) await this.gap(trx, served, buffer.now(), read.reason);
        return;
      }
      const items: { served: Served; event: EventOccurrence }[] = [];
      for (const entry of read.entries) {
        const event = shape(served, entry.event);
        if (event)
          items.push({ served, event: Object.assign({}, event, { cursor: buffer.cursorOf(entry.seq) }) });
      }
      await this.enqueueAll(trx, items);
      await webhookRows.update(subscriptionsIn(trx), row.key, { cursor: read.cursor });
    });
  }

  /**
   * Queues events in the caller's transaction. An event no delivery can carry (too large, an id no
   * header can carry) is logged and skipped, never retried forever: the others still go.
   */
  private async enqueueAll(
    trx: Kysely<Tables>,
    items: readonly { served: Served; event: EventOccurrence }[],
  ): Promise<void> {
    const queue = items.map(({ served, event }) => ({
      subscriptionId: served.row.delivery_id,
      event: deliveryOf(event),
    }));
    try {
      await this.engine.enqueueMany(deliveriesIn(trx), queue);
    } catch (error) {
      if ((error as { code?: unknown }).code !== "ERR_DELIVERY_INVALID_EVENT") throw error;
      // Every event is checked before anything is written: each alone, so only the bad ones go.
      for (const item of queue) {
        try {
          await this.engine.enqueue(deliveriesIn(trx), item.subscriptionId, item.event);
        } catch (each) {
          if ((each as { code?: unknown }).code !== "ERR_DELIVERY_INVALID_EVENT") throw each;
          this.core.log.warn(
            { event: item.event.type, err: (each as Error).message },
            "an event no webhook can carry was skipped",
          );
        }
      }
    }
  }

  /**
   * The cursor could not be honoured: the sketch's signed CursorExpired envelope, or on the
   * SEP-3415 wire (which has no CursorExpired) the `{type: "gap", cursor}` envelope with the
   * fresh cursor delivery restarts from.
   */
  private async gap(
    trx: Kysely<Tables>,
    served: Served,
    cursor: string | null,
    reason: string,
  ): Promise<void> {
    const { row, wire } = served;
    if (row.channel === "mcp-standard" && wire.cursorExpiry === "truncate") {
      await this.engine.enqueue(deliveriesIn(trx), row.delivery_id, {
        type: "gap",
        eventId: `gap_${digest(row.id, String(this.core.clock()), reason).slice(0, 22)}`,
        data: {},
        gap: { cursor },
      });
      return;
    }
    await this.enqueueError(trx, served, new EventsError("CursorExpired", { reason }));
  }

  private async enqueueError(trx: Kysely<Tables>, served: Served, error: EventsError): Promise<void> {
    await this.engine.enqueue(deliveriesIn(trx), served.row.delivery_id, {
      type: "error",
      eventId: `err_${digest(served.row.id, String(this.core.clock()), error.kind).slice(0, 22)}`,
      data: {},
      error: wireError(served.wire, error),
    });
  }

  /** Authorizes the stored subscription again; false (and terminated) when it no longer is. */
  private async reauthorize(row: WebhookSubscriptionRow): Promise<boolean> {
    const served = this.servedOf(row);
    if (!served) return true;
    try {
      await authorize(served.def, served.ctx, served.params);
      await webhookRows.update(subscriptionsIn(this.db), row.key, { authorized_at: this.core.clock() });
      return true;
    } catch (error) {
      await this.terminate(
        served,
        error instanceof EventsError ? error : new EventsError("Unauthorized", { reason: "Access revoked" }),
      );
      return false;
    }
  }

  /**
   * Revoked authorization: the signed error envelope goes out once (whichever process gets there
   * first), nothing more is delivered, and the row stays until its TTL so a refresh learns why
   * (and is refused while still revoked).
   */
  private async terminate(served: Served, error: EventsError): Promise<void> {
    const ended = await this.store.transaction(async (trx) => {
      const result = await subscriptionsIn(trx)
        .updateTable("events_webhook_subscriptions")
        .set({ terminated: 1, reported: error.kind, updated_at: this.core.clock() })
        .where("key", "=", served.row.key)
        .where("terminated", "=", 0)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) return false;
      await this.enqueueError(trx, served, error);
      return true;
    });
    if (ended) await this.unsubscribed(served);
  }

  private async unsubscribed(served: Served): Promise<void> {
    try {
      await served.def.onUnsubscribe?.(served.ctx, served.params, served.row.id);
    } catch (error) {
      this.core.log.warn({ err: (error as Error).message, event: served.row.name }, "onUnsubscribe failed");
    }
  }

  /** Ends the subscription and its delivery, once (the process whose delete found the row). */
  private async release(row: WebhookSubscriptionRow, reason: string): Promise<void> {
    this.feeds.delete(row.key);
    if (!(await webhookRows.remove(subscriptionsIn(this.db), row.key, row.delivery_id))) return;
    await this.engine
      .end(deliveriesIn(this.store.db), row.delivery_id, reason, { notify: false })
      .catch(() => undefined);
    // A terminated subscription heard its onUnsubscribe when it was terminated.
    const served = row.terminated === 1 ? undefined : this.servedOf(row);
    if (served) await this.unsubscribed(served);
  }

  /**
   * Whether this principal's callback was verified already (SEP-3415: results are cached per
   * principal and URL), by any process: a second subscription to the same endpoint is not
   * challenged again.
   */
  private async verifiedBefore(ownerUrl: string): Promise<boolean> {
    for (const { delivery_id } of await webhookRows.sameEndpoint(subscriptionsIn(this.db), ownerUrl)) {
      const view = await this.engine.get(deliveriesIn(this.store.db), delivery_id).catch(() => undefined);
      if (view?.verified && view.status !== "ended") return true;
    }
    return false;
  }

  /**
   * Whether the callback's origin publishes a receiver document listing a path prefix of it
   * (fetched under the egress policy, no redirects; cached per principal and URL).
   */
  private async listedByReceiverDocument(principal: string, url: string): Promise<boolean> {
    if (this.options.receiverDocument === false) return false;
    const key = `${principal}\u0000${url}`;
    const now = this.core.clock();
    const cached = this.documented.get(key);
    if (cached && cached.until > now) return cached.listed;
    const target = new URL(url);
    const answer = await getJson({
      url: `${target.origin}${RECEIVER_DOCUMENT}`,
      policy: this.options.policy,
    });
    const document = answer.ok && answer.status === 200 ? answer.json : undefined;
    const receivers =
      typeof document === "object" && document !== null
        ? (document as { receivers?: unknown }).receivers
        : [];
    const listed =
      Array.isArray(receivers) &&
      receivers.some(
        (path) => typeof path === "string" && path.startsWith("/") && target.pathname.startsWith(path),
      );
    if (this.documented.size > 10_000) this.documented.clear();
    this.documented.set(key, { listed, until: now + RECEIVER_DOCUMENT_TTL_MS });
    return listed;
  }

  /**
   * Waits for the challenge; undefined once it passed, else why it failed: the endpoint could not
   * be reached (`connection_refused`, `timeout`, `tls_error`) or answered wrong (`challenge_failed`).
   */
  private async verification(deliveryId: string): Promise<string | undefined> {
    const deadline = Date.now() + (this.options.verifyTimeoutMs ?? 10_000);
    for (;;) {
      if (!this.worker && this.options.engine === undefined) await this.engine.runDue();
      const view = await this.engine.get(deliveriesIn(this.store.db), deliveryId);
      if (view.verified) return undefined;
      if (view.status === "ended" || Date.now() >= deadline) break;
      await new Promise((resolveWait) => setTimeout(resolveWait, 20));
    }
    const log = await showDelivery(deliveriesIn(this.store.db), deliveryId, 1);
    const category = log.attempts[0]?.category;
    const reached = category === undefined || category === "wrong_answer" || category.startsWith("http_");
    return reached ? "challenge_failed" : (failureCategory(category) ?? "challenge_failed");
  }

  private async status(view: SubscriptionView): Promise<DeliveryStatus> {
    const s = view.deliveryStatus;
    // Only the six categories: never an endpoint's words, never an events error name.
    const lastError = s.lastError === null ? null : (failureCategory(s.lastError) ?? "http_4xx");
    return {
      active: s.active,
      lastDeliveryAt: s.lastDeliveryAt === null ? null : new Date(s.lastDeliveryAt).toISOString(),
      lastError: view.verified ? lastError : "challenge_failed",
      ...(s.failedSince === null ? {} : { failedSince: new Date(s.failedSince).toISOString() }),
      // Read only while deliveries fail: a success clears lastError, and with it this.
      ...(s.lastError === null || !view.verified ? {} : await this.throttling(view.id)),
    };
  }

  /**
   * Whether the receiver is rate-limiting us: its last answer was 429 or 503 and the event it
   * refused waits for its retry, which honours the receiver's Retry-After (`retryAfterMs` is
   * how long until then). Read from the delivery log, which records each failed attempt's status.
   */
  private async throttling(deliveryId: string): Promise<{ throttled?: true; retryAfterMs?: number }> {
    const log = await showDelivery(deliveriesIn(this.store.db), deliveryId, 1);
    const last = log.attempts[0];
    const head = log.queue[0];
    const limited = last?.kind !== "challenge" && (last?.httpStatus === 429 || last?.httpStatus === 503);
    if (!limited || head === undefined || head.attempts === 0) return {};
    return { throttled: true, retryAfterMs: Math.max(0, head.nextAttemptAt - this.core.clock()) };
  }
}

/** What one events/subscribe asked for, decoded and authorized. */
interface Request_ {
  wire: EventsDialect;
  principal: string | undefined;
  id: string;
  key: string;
  paramsKey: string;
  url: string;
  secret: string | undefined;
  cursor: string | null;
  maxAgeMs: number | undefined;
  refreshBefore: number;
  def: AnyEventDefinition;
  params: JsonObject;
  ctx: SubscriptionContext;
}
