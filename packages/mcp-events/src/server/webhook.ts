import {
  createDeliveryEngine,
  type DeliveryEngine,
  type DeliveryTables,
  deliveryMigrations,
  type RetryPolicy,
  type SubscriptionView,
  showDelivery,
  type Worker,
} from "@doorbell/delivery";
import {
  createSealer,
  type Database,
  generateKeyEntry,
  Keyring,
  migrate,
  openDatabase,
  type Sealer,
} from "@doorbell/store";
import { checkUrl, decodeSecret, type EgressPolicy, generateSecret, getJson } from "@doorbell/webhooks";
import {
  type DeliveryStatus,
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
  type LiveSubscription,
  resolve,
  runCheck,
  serialized,
  shape,
  wireError,
  wireOf,
} from "./core.js";

export interface WebhookOptions {
  /** Where deliveries may go: `productionPolicy()` in production, `developmentPolicy()` for loopback. */
  policy: EgressPolicy;
  /** The subscription TTL: `refreshBefore` is this far from each (re)subscribe (default 30 min). */
  ttlMs?: number;
  /**
   * A migrated store (`deliveryMigrations`) and its sealer make the outbox durable across restarts.
   * Without one the events server owns an in-memory SQLite database: soft state, as the sketch says.
   */
  store?: Database<DeliveryTables>;
  sealer?: Sealer;
  /** How long `events/subscribe` waits for the endpoint to echo the challenge (default 10 s). */
  verifyTimeoutMs?: number;
  retry?: RetryPolicy;
  /** Run a delivery worker in this process (default true). */
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

/** How long a receiver document's answer is trusted, per (principal, url). */
const RECEIVER_DOCUMENT_TTL_MS = 10 * 60_000;
const RECEIVER_DOCUMENT = "/.well-known/mcp-webhook-receiver.json";

interface Record_ {
  key: string;
  id: string;
  deliveryId: string;
  /** The delivery channel of the subscriber's dialect: `mcp` (X-MCP-*) or `mcp-standard` (SEP-3415). */
  channel: WebhookChannel;
  /** The subscriber's dialect: its envelopes and error codes. */
  wire: EventsDialect;
  name: string;
  paramsKey: string;
  sub: LiveSubscription;
  refreshBefore: number;
  /** A digest of the secret last supplied: a refresh with the same secret is not a rotation. */
  secretDigest: string;
  /** Poll-driven feed for types with a check function. */
  timer?: NodeJS.Timeout;
  /** Runs the feed's check now (`EventsServer.wake`). */
  wake?: () => void;
  cursor: string | null;
  /** An events error sent as a signed envelope (kept for the refresh that follows it). */
  reported?: string;
  /** The cursor could not be honoured: delivery restarted from a fresh one (a gap was sent). */
  truncated?: boolean;
  terminated: boolean;
}

const MIN_ID_LENGTH = 16;

type WebhookChannel = "mcp" | "mcp-standard";

/**
 * The delivery channel a subscriber's dialect signs with: the sketch's X-MCP-* (`mcp`), or SEP-3415's
 * Standard Webhooks headers and bodies (`mcp-standard`). Both follow the same MCP delivery rules.
 */
export function channelOf(wire: EventsDialect): WebhookChannel {
  return wire.signature === "standard" ? "mcp-standard" : "mcp";
}

/** An event as the delivery engine queues it. */
function deliveryOf(event: EventOccurrence) {
  return {
    type: event.name,
    eventId: event.eventId,
    timestamp: event.timestamp,
    data: event.data,
    ...(event.cursor === undefined ? {} : { cursor: event.cursor }),
  };
}

/** Delivery's failure categories folded into the sketch's fixed list; nothing else leaks. */
const CATEGORY: Record<string, string> = {
  connection_refused: "connection_refused",
  connection_error: "connection_refused",
  dns_error: "connection_refused",
  blocked_url: "connection_refused",
  blocked_address: "connection_refused",
  timeout: "timeout",
  aborted: "timeout",
  tls_error: "tls_error",
  http_3xx: "http_4xx",
  http_4xx: "http_4xx",
  http_5xx: "http_5xx",
  challenge_failed: "challenge_failed",
};

/**
 * `events/subscribe` and `events/unsubscribe`: soft-state subscriptions with a TTL, keyed by
 * (principal, url, id); deliveries through `@doorbell/delivery`'s MCP channels: "mcp" (X-MCP-*
 * signatures) for sketch subscribers, "mcp-standard" (Standard Webhooks, SEP-3415 bodies) for
 * SEP-3415 ones; both with the verification challenge, retries, suspension and `deliveryStatus`.
 */
export class WebhookMode {
  private readonly records = new Map<string, Record_>();
  /** Receiver-document verdicts per (principal, url), until they expire. */
  private readonly documented = new Map<string, { listed: boolean; until: number }>();
  /** Emitted events waiting for this tick's one `enqueueMany` (an emit fans out to many subscriptions). */
  private pending: { record: Record_; event: EventOccurrence }[] = [];
  /** Batches are written one after another, so each subscription's events keep their order. */
  private flushed: Promise<void> = Promise.resolve();
  private engine!: DeliveryEngine;
  private store!: Database<DeliveryTables>;
  private ownsStore = false;
  private worker: Worker | undefined;
  readonly ttlMs: number;

  constructor(
    private readonly core: Core,
    private readonly options: WebhookOptions,
  ) {
    this.ttlMs = options.ttlMs ?? 30 * 60 * 1000;
  }

  async start(): Promise<void> {
    let sealer = this.options.sealer;
    if (this.options.store) {
      if (!sealer) throw new Error("webhook.store needs webhook.sealer");
      this.store = this.options.store;
    } else {
      this.store = await openDatabase<DeliveryTables>(":memory:");
      await migrate(this.store, [deliveryMigrations]);
      sealer = createSealer(new Keyring([generateKeyEntry()]));
      this.ownsStore = true;
    }
    this.engine = createDeliveryEngine({
      store: this.store,
      sealer,
      policy: this.options.policy,
      clock: this.core.clock,
      coalescing: "off",
      challengeDelaysMs: [1_000, 3_000],
      logger: this.core.log,
      ...(this.options.retry ? { retry: this.options.retry } : {}),
    });
    if (this.options.worker !== false) {
      this.worker = this.engine.worker();
      this.worker.start();
    }
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
    const { def, params, ctx } = await resolve(this.core, query, "webhook", call, id);
    const verdict = checkUrl(query.url, this.options.policy);
    if (!verdict.ok) throw new EventsError("InvalidCallbackUrl", { reason: verdict.reason });

    const now = this.core.clock();
    const refreshBefore = now + this.ttlFor(query.ttlMs);
    const channel = channelOf(wire);
    const existing = this.records.get(key);
    const lapsed =
      existing !== undefined &&
      (await this.engine.get(this.store.db, existing.deliveryId)).status === "ended";
    if (
      existing &&
      !lapsed &&
      !existing.terminated &&
      existing.channel === channel &&
      existing.name === query.name &&
      existing.paramsKey === paramsKey
    ) {
      // Refresh: TTL reset, delivery reactivated, secret rotated when a different one is supplied
      // (deployed clients send the same secret on every refresh: re-proving it by a challenge
      // would only risk ending the subscription while the receiver is busy); the cursor is a no-op.
      // deliveryStatus as it was: `active: false` tells the client this refresh just resumed it.
      const before = await this.engine.get(this.store.db, existing.deliveryId);
      const rotated = query.secret !== undefined && digest(query.secret) !== existing.secretDigest;
      await this.engine.renew(this.store.db, existing.deliveryId, {
        expiresAt: refreshBefore,
        refreshBefore,
        ...(rotated ? { secret: query.secret } : {}),
      });
      existing.refreshBefore = refreshBefore;
      if (rotated) existing.secretDigest = digest(query.secret as string);
      const outcome: SubscribeOutcome = {
        id,
        refreshBefore: new Date(refreshBefore).toISOString(),
        cursor: existing.cursor,
        deliveryStatus: await this.status(before),
        truncated: false,
      };
      existing.reported = undefined;
      return wire.subscribe.result.encode(outcome);
    }
    // Different name, params or wire under the same key address a new subscription: the old one goes.
    if (existing) await this.release(existing, "replaced");
    this.core.live.checkLimit(principal);

    const secret = query.secret ?? generateSecret();
    const preverified = await this.listedByReceiverDocument(principal ?? "", query.url);
    const created = await this.engine.subscribe(this.store.db, {
      channel,
      url: query.url,
      secret,
      expiresAt: refreshBefore,
      refreshBefore,
      requiresApproval: false,
      subscriberId: id,
      preverified,
    });
    // A client-supplied secret lets the endpoint verify the challenge now, so subscribe waits for
    // it (-32015 when it fails). A server-generated secret reaches the client only in this
    // response: the challenge then completes afterwards (the receiver answers 503 until it knows
    // the secret) and nothing is delivered before it passes.
    if (!preverified && query.secret !== undefined && !(await this.verified(created.id))) {
      await this.engine.end(this.store.db, created.id, "challenge_failed", { notify: false });
      throw new EventsError("InvalidCallbackUrl", { reason: "challenge_failed" });
    }

    const record: Record_ = {
      key,
      id,
      deliveryId: created.id,
      channel,
      wire,
      name: def.name,
      paramsKey,
      refreshBefore,
      secretDigest: digest(secret),
      cursor: query.cursor,
      terminated: false,
      sub: {
        id,
        mode: "webhook",
        def,
        params,
        ctx,
        // An emit was checked before it got here; what transform made of it may still be refused.
        deliver: (event) => this.batch(record, event),
        wake: () => record.wake?.(),
        terminate: (error) => this.terminate(record, error),
      },
    };
    try {
      await this.core.live.add(record.sub);
    } catch (error) {
      await this.engine.end(this.store.db, created.id, "refused", { notify: false });
      throw error;
    }
    this.records.set(key, record);
    await this.startFeed(record, wire, query.maxAgeMs);
    const outcome: SubscribeOutcome = {
      id,
      refreshBefore: new Date(refreshBefore).toISOString(),
      cursor: record.cursor,
      truncated: record.truncated === true,
      ...(query.secret === undefined ? { secret } : {}),
    };
    return wire.subscribe.result.encode(outcome);
  }

  async unsubscribe(raw: unknown, call: CallContext): Promise<JsonObject> {
    const wire = wireOf(this.core, raw, call);
    const query = wire.unsubscribe.params.decode(raw);
    const principal = this.core.principalOf(call);
    const id =
      query.id ??
      `sub_${digest(principal ?? "", query.url, query.name ?? "", canonicalJson(query.params ?? {}))}`;
    const record = this.records.get(digest(principal ?? "", query.url, id));
    if (!record) throw new EventsError("SubscriptionNotFound", { id });
    await this.release(record, "unsubscribed");
    return wire.unsubscribe.result.encode({});
  }

  /**
   * The TTL granted: the client's `ttlMs` within [minTtlMs, the server's ttlMs]. `null` (no
   * expiry) gets the server's longest: these subscriptions do not survive a restart, so the
   * server's `refreshBefore` stays authoritative (docs/decisions.md, issue 15).
   */
  private ttlFor(asked: number | null | undefined): number {
    if (asked === undefined || asked === null) return this.ttlMs;
    return Math.min(this.ttlMs, Math.max(this.options.minTtlMs ?? 1_000, asked));
  }

  /** Subscriptions whose TTL lapsed without a refresh end. */
  async sweep(now: number): Promise<void> {
    for (const record of [...this.records.values()])
      if (record.refreshBefore <= now) await this.release(record, "expired");
  }

  /** Delivery-time re-check of every live webhook subscription. */
  async recheck(): Promise<void> {
    for (const record of [...this.records.values()]) {
      if (record.terminated) continue;
      try {
        await authorize(record.sub.def, record.sub.ctx, record.sub.params);
      } catch (error) {
        await this.terminate(
          record,
          error instanceof EventsError
            ? error
            : new EventsError("Unauthorized", { reason: "Access revoked" }),
        );
      }
    }
  }

  async close(): Promise<void> {
    for (const record of [...this.records.values()]) {
      if (record.timer) clearInterval(record.timer);
      await this.core.live.remove(record.sub);
    }
    this.records.clear();
    // What was emitted before close is queued (a durable store delivers it after a restart).
    await new Promise<void>((resolve) => queueMicrotask(resolve));
    await this.flushed;
    await this.worker?.stop();
    if (this.ownsStore) await this.store.close();
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

  private async verified(deliveryId: string): Promise<boolean> {
    const deadline = Date.now() + (this.options.verifyTimeoutMs ?? 10_000);
    for (;;) {
      if (!this.worker) await this.engine.runDue();
      const view = await this.engine.get(this.store.db, deliveryId);
      if (view.verified) return true;
      if (view.status === "ended" || Date.now() >= deadline) return false;
      await new Promise((resolveWait) => setTimeout(resolveWait, 20));
    }
  }

  private async startFeed(record: Record_, wire: EventsDialect, maxAgeMs?: number): Promise<void> {
    const { def, params, ctx } = record.sub;
    const core = this.core;
    if (!def.check) {
      const mine = (entry: { target?: string; at: number }) =>
        (entry.target === undefined || entry.target === record.id) &&
        (maxAgeMs === undefined || entry.at >= core.clock() - maxAgeMs);
      // No cursor: from now, or, with maxAgeMs, from the oldest event still that young.
      const read =
        record.cursor === null
          ? maxAgeMs === undefined
            ? undefined
            : core.buffer.readRecent(def.name, Number.MAX_SAFE_INTEGER, mine)
          : core.buffer.read(def.name, record.cursor, Number.MAX_SAFE_INTEGER, mine);
      if (read === undefined) {
        record.cursor = core.buffer.now();
        return;
      }
      if (!read.ok) {
        record.cursor = core.buffer.now();
        await this.gap(record, wire, read.reason);
        return;
      }
      for (const entry of read.entries) {
        const event = shape(record.sub, entry.event);
        if (event)
          await this.enqueueOrSkip(
            record,
            Object.assign({}, event, { cursor: core.buffer.cursorOf(entry.seq) }),
          );
      }
      if (read.entries.length === 0) record.cursor = read.cursor;
      return;
    }
    const poll = serialized(async () => {
      if (record.terminated) return;
      let expired: string | undefined;
      try {
        const batch = await runCheck(core, def, ctx, params, record.cursor, core.settings.maxMaxEvents);
        // One event no delivery can carry is skipped, never retried forever: the cursor moves on.
        for (const event of batch.events) await this.enqueueOrSkip(record, event);
        record.cursor = batch.cursor;
      } catch (error) {
        if (error instanceof EventsError && error.kind === "CursorExpired") {
          record.cursor = null;
          expired = String(error.data?.reason ?? "Cursor expired");
        } else core.log.warn({ event: def.name, err: (error as Error).message }, "webhook check failed");
      }
      if (record.cursor === null)
        record.cursor =
          (await runCheck(core, def, ctx, params, null, 1).catch(() => undefined))?.cursor ?? null;
      // After the fresh cursor is known: SEP-3415's gap envelope carries it.
      if (expired !== undefined) await this.gap(record, wire, expired);
    });
    // The first check runs now, so the answer's cursor and `truncated` are already known.
    await poll();
    record.wake = () => void poll();
    record.timer = setInterval(record.wake, core.settings.pushIntervalMs);
  }

  /** Queues an event; one the outbox refuses (too large, an id no header can carry) is logged and skipped. */
  private async enqueueOrSkip(record: Record_, event: EventOccurrence): Promise<void> {
    try {
      await this.enqueue(record, event);
    } catch (error) {
      if ((error as { code?: unknown }).code !== "ERR_DELIVERY_INVALID_EVENT") throw error;
      if (event.cursor !== undefined) record.cursor = event.cursor;
      this.core.log.warn(
        { event: record.name, err: (error as Error).message },
        "an event no webhook can carry was skipped",
      );
    }
  }

  /**
   * The cursor could not be honoured: the sketch's signed CursorExpired envelope, or on the
   * SEP-3415 wire (which has no CursorExpired) the `{type: "gap", cursor}` envelope with the
   * fresh cursor delivery restarts from.
   */
  private async gap(record: Record_, wire: EventsDialect, reason: string): Promise<void> {
    record.reported = "CursorExpired";
    record.truncated = true;
    if (record.channel === "mcp-standard" && wire.cursorExpiry === "truncate") {
      await this.engine.enqueue(this.store.db, record.deliveryId, {
        type: "gap",
        eventId: `gap_${digest(record.id, String(this.core.clock()), reason).slice(0, 22)}`,
        data: {},
        gap: { cursor: record.cursor },
      });
      return;
    }
    await this.enqueueError(record, new EventsError("CursorExpired", { reason }));
  }

  private async enqueue(record: Record_, event: EventOccurrence): Promise<void> {
    if (record.terminated) return;
    if (event.cursor !== undefined) record.cursor = event.cursor;
    await this.engine.enqueue(this.store.db, record.deliveryId, deliveryOf(event));
  }

  /**
   * An emitted event for a live subscription: queued with every other delivery of this tick in one
   * `enqueueMany` (a handful of statements instead of three per subscription and event).
   */
  private batch(record: Record_, event: EventOccurrence): void {
    if (record.terminated) return;
    if (event.cursor !== undefined) record.cursor = event.cursor;
    this.pending.push({ record, event });
    if (this.pending.length > 1) return;
    queueMicrotask(() => {
      const batch = this.pending;
      this.pending = [];
      this.flushed = this.flushed.then(() => this.flush(batch));
    });
  }

  private async flush(batch: { record: Record_; event: EventOccurrence }[]): Promise<void> {
    const live = batch.filter(({ record }) => !record.terminated);
    try {
      await this.engine.enqueueMany(
        this.store.db,
        live.map(({ record, event }) => ({ subscriptionId: record.deliveryId, event: deliveryOf(event) })),
      );
    } catch {
      // One refused event refuses the whole batch: each alone, so only that one is skipped.
      for (const { record, event } of live) {
        await this.enqueueOrSkip(record, event).catch((error: unknown) =>
          this.core.log.warn({ event: record.name, err: (error as Error).message }, "webhook enqueue failed"),
        );
      }
    }
  }

  private async enqueueError(record: Record_, error: EventsError): Promise<void> {
    await this.engine.enqueue(this.store.db, record.deliveryId, {
      type: "error",
      eventId: `err_${digest(record.id, String(this.core.clock()), error.kind).slice(0, 22)}`,
      data: {},
      error: wireError(record.wire, error),
    });
  }

  /**
   * Revoked authorization: the signed error envelope goes out, nothing more is delivered, and
   * the record stays until its TTL so a refresh learns why (and is refused while still revoked).
   */
  private async terminate(record: Record_, error: EventsError): Promise<void> {
    if (record.terminated) return;
    await this.enqueueError(record, error);
    record.terminated = true;
    record.reported = error.kind;
    if (record.timer) clearInterval(record.timer);
    await this.core.live.remove(record.sub);
  }

  private async release(record: Record_, reason: string): Promise<void> {
    this.records.delete(record.key);
    if (record.timer) clearInterval(record.timer);
    await this.core.live.remove(record.sub);
    await this.engine.end(this.store.db, record.deliveryId, reason, { notify: false }).catch(() => undefined);
  }

  private async status(view: SubscriptionView): Promise<DeliveryStatus> {
    const s = view.deliveryStatus;
    // Only the six categories: never an endpoint's words, never an events error name.
    const lastError = s.lastError === null ? null : (CATEGORY[s.lastError] ?? "http_4xx");
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
    const log = await showDelivery(this.store.db, deliveryId, 1);
    const last = log.attempts[0];
    const head = log.queue[0];
    const limited = last?.kind !== "challenge" && (last?.httpStatus === 429 || last?.httpStatus === 503);
    if (!limited || head === undefined || head.attempts === 0) return {};
    return { throttled: true, retryAfterMs: Math.max(0, head.nextAttemptAt - this.core.clock()) };
  }
}
