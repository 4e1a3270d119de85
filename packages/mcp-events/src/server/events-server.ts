import { type Logger, pino } from "pino";
import { z } from "zod";
import {
  type DialectName,
  dialect,
  ERROR_CODE_PROFILES,
  type ErrorCodeProfile,
  EVENTS_METHODS,
  type EventDescriptor,
  EventsError,
  type JsonObject,
  type RequestId,
} from "../protocol/index.js";
import { type AttachOptions, type AttachTarget, createAttacher, type EventsMethod } from "./attach.js";
import { type CallContext, defaultPrincipal } from "./context.js";
import {
  type Core,
  compileInputSchema,
  type Limits,
  LiveTable,
  modesOf,
  occurrenceOf,
  shape,
  validateEmit,
  wireOf,
} from "./core.js";
import { EmitBuffer, type EmitBufferOptions } from "./emit-buffer.js";
import { OwnedStreams, ownedStreamsOf } from "./owned-streams.js";
import { PollMode } from "./poll.js";
import { StreamMode } from "./stream.js";
import type { AnyEventDefinition, EventDefinition, EventInput } from "./types.js";
import type { WebhookMode, WebhookOptions } from "./webhook.js";

export interface EventsServerOptions {
  /** The wire the server speaks by default (requests that say otherwise are answered in kind). */
  dialect?: DialectName;
  /**
   * How SEP-3415's five general errors are numbered: "deployed" (default: -32011..-32015, what
   * ChatGPT and the AI SDK use today) or "sep-3415" (the draft SEP's -32023..-32027). The sketch
   * dialect keeps its own codes either way.
   */
  errorCodes?: ErrorCodeProfile;
  /** Recommended poll interval (default 30 s). */
  nextPollMs?: number;
  /** Events per poll when the client sets no `maxEvents` (default 100), and the cap (default 1000). */
  maxEvents?: { default?: number; max?: number };
  /** Push heartbeat (default 15 s, at most 30 s). */
  heartbeatMs?: number;
  /** How often poll-driven push and webhook call a check function (default 5 s). */
  pushIntervalMs?: number;
  /** Delivery-time re-authorization of live subscriptions (default 60 s). */
  reauthorizeMs?: number;
  /** Poll lease: `onUnsubscribe` fires when no poll renews it for this long (default 5 min). */
  pollLeaseMs?: number;
  emitBuffer?: EmitBufferOptions;
  limits?: Limits;
  /** Webhook delivery is offered only when configured (the sketch's `webhook_ttl`). */
  webhook?: WebhookOptions;
  /** `events/list` page size (default 100). */
  pageSize?: number;
  /** The caller's principal; by default the auth info's `extra.sub` or its client id. */
  principal?: (call: CallContext) => string | undefined;
  clock?: () => number;
  logger?: Logger;
}

export interface EmitOptions {
  /** Targeted emit: only this subscription (the id `onSubscribe` received) gets it. */
  subscriptionId?: string;
}

export interface WakeOptions extends EmitOptions {
  /**
   * Only the subscriptions whose `EventDefinition.topic` is this, or one of these: a change that
   * touches many topics is one wake (and one read of the stored webhook subscriptions), not one each.
   */
  topic?: string | readonly string[];
}

export interface EventsServer {
  /** Declares an event type; calls after `attach` send `notifications/events/list_changed`. */
  event<P extends JsonObject>(definition: EventDefinition<P>): void;
  /** Removes an event type: its live subscriptions are terminated with EventNotFound. */
  removeEvent(name: string): Promise<void>;
  /** Broadcast (match/transform per subscription) or targeted emit, to every mode. */
  emit(name: string, event: EventInput, options?: EmitOptions): void;
  /**
   * For a type with a check function: the upstream changed, so every live push and webhook
   * subscription of `name` (or only `options.subscriptionId`) runs its check now instead of at
   * its next interval. The check function stays the one source of events and cursors (an emit
   * beside it could move a subscription's cursor backwards); poll needs nothing, it asks.
   */
  wake(name: string, options?: WakeOptions): void;
  /**
   * Registers the `events/*` handlers and the capability (top-level `events` and
   * `extensions["io.modelcontextprotocol/events"]`) on an SDK server before it connects: a
   * `@modelcontextprotocol/server` 2.x `McpServer` or `Server` (e.g. inside `createMcpHandler`'s
   * per-request factory; cheap, the handlers are built once), or a `@modelcontextprotocol/sdk`
   * 1.x one. A long-lived (sessionful) 2.x server passes `{ session: true }` to also hear
   * `notifications/events/list_changed`; 1.x servers always do.
   */
  attach(server: AttachTarget, options?: AttachOptions): void;
  /** Calls `listener` whenever the set of event types changes (`subscriptions/listen` streams). */
  onListChanged(listener: () => void): () => void;
  /** Re-runs every live subscription's authorization now; refused ones are terminated. */
  recheckAuthorization(): Promise<void>;
  /** Ends poll leases and webhook subscriptions past their time (also runs on a timer). */
  sweep(): Promise<void>;
  /** The transport saw an `events/stream` request's connection close. */
  streamDisconnected(sessionId: string | undefined, requestId: RequestId): void;
  /** The webhook delivery engine, when webhook delivery is configured. */
  readonly webhook: WebhookMode | undefined;
  /** Poll and push subscriptions this process serves (webhook ones are stored: `countSubscriptions`). */
  readonly liveSubscriptions: number;
  /** Every subscription: this process's poll and push ones and the stored webhook ones of all processes. */
  countSubscriptions(): Promise<number>;
  close(): Promise<void>;
}

const HEARTBEAT_MAX_MS = 30_000;

export async function createEventsServer(options: EventsServerOptions = {}): Promise<EventsServer> {
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  if (!(heartbeatMs > 0 && heartbeatMs <= HEARTBEAT_MAX_MS))
    throw new Error("heartbeatMs must be between 1 and 30 000 (the sketch: at least every 30 s)");
  const errorCodes = options.errorCodes ?? "deployed";
  if (!ERROR_CODE_PROFILES.includes(errorCodes))
    throw new Error(`errorCodes must be "deployed" or "sep-3415", not ${JSON.stringify(errorCodes)}`);
  const definitions = new Map<string, AnyEventDefinition>();
  const listChangedListeners = new Set<() => void>();
  const core = coreOf(options, heartbeatMs, errorCodes, definitions);
  const { settings, clock, log } = core;
  const poll = new PollMode(core);
  const stream = new StreamMode(core);
  // Loaded only when webhooks are on: poll and push never load @doorbell/delivery and
  // @doorbell/store (and so never need better-sqlite3 or pg installed).
  const webhook = options.webhook
    ? new (await import("./webhook.js")).WebhookMode(core, options.webhook)
    : undefined;
  await webhook?.start();

  const timers = [
    setInterval(() => void events.sweep(), Math.min(settings.pollLeaseMs, webhook?.ttlMs ?? 30_000, 30_000)),
    setInterval(() => void events.recheckAuthorization(), settings.reauthorizeMs),
  ];
  for (const timer of timers) timer.unref();

  const listChanged = () => {
    for (const listener of [...listChangedListeners]) {
      try {
        listener();
      } catch (error) {
        log.warn({ err: (error as Error).message }, "list_changed listener failed");
      }
    }
  };

  const list = (raw: unknown, call: CallContext): JsonObject =>
    listEvents(core, definitions, options.pageSize ?? 100, raw, call);

  const noWebhook = (): never => {
    throw new EventsError("DeliveryModeUnsupported", { mode: "webhook" });
  };
  const methods: Record<
    EventsMethod,
    (params: unknown, call: CallContext) => Promise<JsonObject> | JsonObject
  > = {
    [EVENTS_METHODS.list]: list,
    [EVENTS_METHODS.poll]: (params, call) => poll.handle(params, call),
    [EVENTS_METHODS.stream]: (params, call) => stream.handle(params, call),
    [EVENTS_METHODS.subscribe]: (params, call) => (webhook ? webhook.subscribe(params, call) : noWebhook()),
    [EVENTS_METHODS.unsubscribe]: (params, call) =>
      webhook ? webhook.unsubscribe(params, call) : noWebhook(),
  };
  const attacher = createAttacher({
    core,
    methods,
    onListChanged: (listener) => events.onListChanged(listener),
  });

  const events: EventsServer = {
    event(definition) {
      if (definitions.has(definition.name))
        throw new Error(`event type ${definition.name} is already declared`);
      compileInputSchema(definition as AnyEventDefinition);
      definitions.set(definition.name, definition as AnyEventDefinition);
      listChanged();
    },
    async removeEvent(name) {
      if (!definitions.delete(name)) return;
      for (const sub of core.live.all())
        if (sub.def.name === name) await sub.terminate(new EventsError("EventNotFound", { name }));
      listChanged();
    },
    emit(name, input, emitOptions = {}) {
      const def = definitions.get(name);
      if (!def) throw new EventsError("EventNotFound", { name });
      emitEvent(core, webhook, def, input, emitOptions.subscriptionId);
    },
    wake(name, wakeOptions = {}) {
      const { subscriptionId: target, topic } = wakeOptions;
      void webhook?.wake(name, wakeOptions);
      if (target !== undefined) {
        const sub = core.live.get(target);
        if (sub?.def.name === name) sub.wake?.();
        return;
      }
      const topics = topic === undefined ? undefined : new Set(typeof topic === "string" ? [topic] : topic);
      for (const sub of core.live.all())
        if (sub.def.name === name && (topics === undefined || topics.has(sub.topic as string))) sub.wake?.();
    },
    attach: (target, attachOptions) => attacher.attach(target, attachOptions),
    onListChanged(listener) {
      listChangedListeners.add(listener);
      return () => {
        listChangedListeners.delete(listener);
      };
    },
    async recheckAuthorization() {
      await poll.recheck();
      await webhook?.recheck();
      await recheckPushAuthorization(core);
    },
    async sweep() {
      const now = clock();
      await poll.sweep(now);
      await webhook?.sweep(now);
    },
    streamDisconnected: (sessionId, requestId) => stream.disconnected(sessionId, requestId),
    webhook,
    get liveSubscriptions() {
      return core.live.size;
    },
    async countSubscriptions() {
      return core.live.size + ((await webhook?.count()) ?? 0);
    },
    async close() {
      for (const timer of timers) clearInterval(timer);
      stream.close();
      await poll.close();
      await webhook?.close();
    },
  };
  ownedStreamsOf.set(events, core.owned);
  return events;
}

/** What every mode's handler shares, with the options' defaults filled in. */
function coreOf(
  options: EventsServerOptions,
  heartbeatMs: number,
  errorCodes: ErrorCodeProfile,
  definitions: ReadonlyMap<string, AnyEventDefinition>,
): Core {
  const clock = options.clock ?? Date.now;
  const log = options.logger ?? pino({ level: "warn", redact: ["url", "secret", "params"] });
  const settings = {
    nextPollMs: options.nextPollMs ?? 30_000,
    defaultMaxEvents: options.maxEvents?.default ?? 100,
    maxMaxEvents: options.maxEvents?.max ?? 1_000,
    heartbeatMs,
    pushIntervalMs: options.pushIntervalMs ?? 5_000,
    reauthorizeMs: options.reauthorizeMs ?? 60_000,
    pollLeaseMs: options.pollLeaseMs ?? 5 * 60_000,
    limits: options.limits ?? {},
  };
  return {
    dialect: dialect(options.dialect ?? "sketch", errorCodes),
    errorCodes,
    settings,
    clock,
    buffer: new EmitBuffer(options.emitBuffer ?? {}, clock),
    log,
    live: new LiveTable(settings.limits, log),
    owned: new OwnedStreams(),
    webhookEnabled: options.webhook !== undefined,
    definition: (name) => definitions.get(name),
    principalOf: options.principal ?? defaultPrincipal,
  };
}

function describe(core: Core, def: AnyEventDefinition): EventDescriptor {
  return {
    name: def.name,
    ...(def.title === undefined ? {} : { title: def.title }),
    ...(def.description === undefined ? {} : { description: def.description }),
    delivery: modesOf(def, core),
    inputSchema:
      def.inputSchema ??
      (def.params ? (z.toJSONSchema(def.params, { io: "input" }) as JsonObject) : { type: "object" }),
    // Deployed clients (the AI SDK) require a payloadSchema on every descriptor.
    payloadSchema: def.payloadSchema ?? { type: "object" },
  };
}

/** `events/list`: one page of the declared event types; the cursor is the next page's offset. */
function listEvents(
  core: Core,
  definitions: ReadonlyMap<string, AnyEventDefinition>,
  pageSize: number,
  raw: unknown,
  call: CallContext,
): JsonObject {
  const wire = wireOf(core, raw, call);
  const query = wire.list.params.decode(raw);
  const names = [...definitions.keys()];
  let start = 0;
  if (query.cursor !== undefined) {
    start = Number.parseInt(query.cursor, 10);
    if (!(String(start) === query.cursor && start >= 0 && start <= names.length))
      throw new EventsError(
        "InvalidParams",
        { field: "cursor" },
        "Invalid events/list params: unknown cursor",
      );
  }
  const page = names.slice(start, start + pageSize);
  const next = start + pageSize < names.length ? String(start + pageSize) : undefined;
  return wire.list.result.encode({
    events: page.map((name) => describe(core, definitions.get(name) as AnyEventDefinition)),
    ...(next === undefined ? {} : { nextCursor: next }),
  });
}

/** Keeps an emitted event (unless check-driven) and hands it to every live subscription that sees it. */
function emitEvent(
  core: Core,
  webhook: WebhookMode | undefined,
  def: AnyEventDefinition,
  input: EventInput,
  target: string | undefined,
): void {
  const name = def.name;
  const event = occurrenceOf(name, input, core.clock);
  // Refused before anything is kept or sent: the emitter learns why and still holds the event.
  validateEmit(event);
  let cursor = event.cursor;
  if (!def.check) cursor = core.buffer.cursorOf(core.buffer.append(event, target));
  // One object for every subscription that sees the event as it is, so it is serialised once.
  // (Object.assign: `{ ...event, cursor }` takes a slow path in V8, microseconds per object.)
  const positioned = cursor === undefined ? event : Object.assign({}, event, { cursor });
  for (const sub of core.live.all()) {
    if (sub.def.name !== name || !sub.deliver) continue;
    if (target !== undefined && sub.id !== target) continue;
    const shaped = target === undefined ? shape(sub, event) : event;
    if (!shaped) continue;
    sub.deliver(
      shaped === event ? positioned : cursor === undefined ? shaped : Object.assign({}, shaped, { cursor }),
    );
  }
  // The stored webhook subscriptions (of every process) are read and queued by the webhook mode.
  webhook?.emitted(def, positioned, target);
}

/** Asks each live push subscription's authorize again; a refusal terminates it. */
async function recheckPushAuthorization(core: Core): Promise<void> {
  for (const sub of core.live.all()) {
    if (sub.mode !== "push" || !sub.def.authorize) continue;
    try {
      const allowed = await sub.def.authorize(sub.ctx, sub.params);
      if (allowed === false)
        await sub.terminate(new EventsError("Unauthorized", { reason: "Access revoked" }));
    } catch (error) {
      await sub.terminate(
        error instanceof EventsError ? error : new EventsError("Unauthorized", { reason: "Access revoked" }),
      );
    }
  }
}
