import { randomBytes } from "node:crypto";
import type { Logger } from "pino";
import { z } from "zod";
import {
  type DeliveryMode,
  type DialectName,
  detectRequestDialect,
  dialect,
  type ErrorCodeProfile,
  type ErrorObject,
  type EventOccurrence,
  type EventsDialect,
  EventsError,
  invalidParams,
  type JsonObject,
  parseOrInvalid,
} from "../protocol/index.js";
import { compileJsonSchema, type JsonSchemaCheck } from "../protocol/json-schema.js";
import type { CallContext } from "./context.js";
import type { EmitBuffer } from "./emit-buffer.js";
import type { OwnedStreams } from "./owned-streams.js";
import type { AnyEventDefinition, CheckResult, EventInput, SubscriptionContext } from "./types.js";

export type { CallContext } from "./context.js";

/** A subscription the server currently serves, in any mode. */
export interface LiveSubscription {
  readonly id: string;
  readonly mode: DeliveryMode;
  readonly def: AnyEventDefinition;
  readonly params: JsonObject;
  readonly ctx: SubscriptionContext;
  /** Push and webhook: receives emitted events already matched and shaped for it. */
  deliver?(event: EventOccurrence): void;
  /** Check-driven push and webhook: run the check function now, because the upstream changed. */
  wake?(): void;
  /** Ends the subscription from the server side, with the mode's termination signal. */
  terminate(error: EventsError): Promise<void>;
  /** What changes it hears of (`EventDefinition.topic`), set when it is added. */
  topic?: string;
}

export interface Limits {
  /** Live subscriptions of all modes on this server. */
  total?: number;
  /** Live subscriptions of one principal (anonymous callers share one budget). */
  perPrincipal?: number;
}

export interface Settings {
  nextPollMs: number;
  defaultMaxEvents: number;
  maxMaxEvents: number;
  heartbeatMs: number;
  pushIntervalMs: number;
  reauthorizeMs: number;
  pollLeaseMs: number;
  limits: Limits;
}

/** What every mode's handler shares. */
export interface Core {
  readonly dialect: EventsDialect;
  /** How SEP-3415's general errors are numbered on this server (default "deployed"). */
  readonly errorCodes?: ErrorCodeProfile;
  readonly settings: Settings;
  readonly clock: () => number;
  readonly buffer: EmitBuffer;
  readonly log: Logger;
  /** Webhook delivery is configured (the sketch's `webhook_ttl`). */
  readonly webhookEnabled: boolean;
  definition(name: string): AnyEventDefinition | undefined;
  principalOf(call: CallContext): string | undefined;
  readonly live: LiveTable;
  /** `events/stream` responses the extension writes itself (handleEventsHttpRequest). */
  readonly owned: OwnedStreams;
}

/**
 * One run of `fn` at a time: a call while it runs asks for exactly one more run after it (so a
 * wake-up during a check is never lost, and checks never overlap and double-deliver).
 */
export function serialized(fn: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  let again = false;
  const run = (): Promise<void> => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      try {
        do {
          again = false;
          await fn();
        } while (again);
      } finally {
        running = undefined;
      }
    })();
    return running;
  };
  return run;
}

export function newId(prefix: string): string {
  return `${prefix}${randomBytes(16).toString("base64url")}`;
}

/**
 * The wire mapping a request is written in: what it says, else SEP-3415 for a 2026-07-28 request
 * (the sketch predates that era), else the server's dialect.
 */
export function wireOf(core: Core, params: unknown, call?: Pick<CallContext, "modern">): EventsDialect {
  const detected: DialectName | undefined = detectRequestDialect(params);
  if (detected) return dialect(detected, core.errorCodes);
  return call?.modern ? dialect("sep-3415", core.errorCodes) : core.dialect;
}

/** Validates a subscription against its event type, mode and authorization. */
export async function resolve(
  core: Core,
  query: { name: string; params: JsonObject },
  mode: DeliveryMode,
  call: CallContext,
  subscriptionId: string,
): Promise<{ def: AnyEventDefinition; params: JsonObject; ctx: SubscriptionContext }> {
  const def = core.definition(query.name);
  if (!def) throw new EventsError("EventNotFound", { name: query.name });
  if (!modesOf(def, core).includes(mode))
    throw new EventsError("DeliveryModeUnsupported", { name: query.name, mode });
  const params = def.params
    ? (parseOrInvalid(def.params, query.params, `params for ${def.name}`) as JsonObject)
    : query.params;
  if (!def.params) checkInputSchema(def, params);
  const principal = core.principalOf(call);
  const ctx: SubscriptionContext = {
    subscriptionId,
    mode,
    name: def.name,
    ...(principal === undefined ? {} : { principal }),
    ...(call.authInfo === undefined ? {} : { authInfo: call.authInfo }),
    ...(call.sessionId === undefined ? {} : { sessionId: call.sessionId }),
  };
  await authorize(def, ctx, params);
  return { def, params, ctx };
}

/** Each definition's plain `inputSchema`, compiled once (null: it has `params` or no schema). */
const inputChecks = new WeakMap<AnyEventDefinition, JsonSchemaCheck | null>();

/**
 * Compiles a definition's `inputSchema` when it is plain JSON Schema (no zod `params`), so it is
 * enforced, not only published. Called when the type is declared: a schema the validator cannot
 * compile is refused then, naming the type, rather than failing every subscription later.
 */
export function compileInputSchema(def: AnyEventDefinition): void {
  if (inputChecks.has(def)) return;
  if (def.params !== undefined || def.inputSchema === undefined) {
    inputChecks.set(def, null);
    return;
  }
  try {
    inputChecks.set(def, compileJsonSchema(def.inputSchema));
  } catch (error) {
    throw new Error(
      `event type ${def.name}: its inputSchema cannot be compiled: ${(error as Error).message}`,
    );
  }
}

/** Arguments that violate the type's plain `inputSchema` are InvalidParams naming each field. */
function checkInputSchema(def: AnyEventDefinition, args: JsonObject): void {
  compileInputSchema(def);
  const issues = inputChecks.get(def)?.(args);
  if (issues !== undefined && issues.length > 0) throw invalidParams(`arguments for ${def.name}`, issues);
}

/** Runs the type's authorizer: false or a thrown EventsError refuses. */
export async function authorize(
  def: AnyEventDefinition,
  ctx: SubscriptionContext,
  params: JsonObject,
): Promise<void> {
  if (!def.authorize) return;
  const allowed = await def.authorize(ctx, params);
  if (allowed === false) throw new EventsError("Unauthorized", { reason: "Access denied" });
}

/** Webhook is on when the server has webhook delivery configured; push unless turned off. */
export function modesOf(def: AnyEventDefinition, core: Pick<Core, "webhookEnabled">): DeliveryMode[] {
  const modes: DeliveryMode[] = ["poll"];
  if (def.delivery?.push !== false) modes.push("push");
  if (def.delivery?.webhook !== false && core.webhookEnabled) modes.push("webhook");
  return modes;
}

export function occurrenceOf(name: string, input: EventInput, clock: () => number): EventOccurrence {
  const timestamp =
    input.timestamp instanceof Date
      ? input.timestamp.toISOString()
      : (input.timestamp ?? new Date(clock()).toISOString());
  return {
    eventId: input.eventId ?? newId("evt_"),
    name,
    timestamp,
    data: input.data,
    ...(input.cursor === undefined ? {} : { cursor: input.cursor }),
  };
}

/**
 * `maxAgeMs`: whether an event is young enough to deliver, by its timestamp (no older than
 * now − maxAgeMs). Every event is without it, and so is one whose timestamp cannot be read.
 */
export function youngEnough(
  maxAgeMs: number | undefined,
  clock: () => number,
): ((event: Pick<EventOccurrence, "timestamp">) => boolean) | undefined {
  if (maxAgeMs === undefined) return undefined;
  return (event) => {
    const at = Date.parse(event.timestamp);
    return Number.isNaN(at) || at >= clock() - maxAgeMs;
  };
}

/** The event as this subscription should see it, or undefined when `match` rejects it. */
export function shape(sub: Pick<LiveSubscription, "def" | "ctx" | "params">, event: EventOccurrence) {
  if (sub.def.match && !sub.def.match(sub.ctx, event, sub.params)) return undefined;
  return sub.def.transform ? sub.def.transform(sub.ctx, event, sub.params) : event;
}

const checkResult = z.object({
  events: z.array(
    z.object({
      eventId: z.string().min(1).optional(),
      data: z.record(z.string(), z.unknown()),
      timestamp: z.union([z.string(), z.date()]).optional(),
      cursor: z.string().optional(),
    }),
  ),
  cursor: z.string(),
  hasMore: z.boolean().optional(),
  nextPollMs: z.number().nonnegative().optional(),
});

export interface Batch {
  events: EventOccurrence[];
  cursor: string;
  hasMore: boolean;
  nextPollMs: number;
}

/**
 * Calls the type's check function and makes its answer deliverable: every event an occurrence,
 * the last one carrying the batch cursor, and at most `maxEvents` of them when the events carry
 * their own positions (otherwise the batch cannot be cut and is returned whole).
 */
export async function runCheck(
  core: Core,
  def: AnyEventDefinition,
  ctx: SubscriptionContext,
  params: JsonObject,
  cursor: string | null,
  maxEvents: number,
): Promise<Batch> {
  const check = def.check as NonNullable<AnyEventDefinition["check"]>;
  const raw = checkResult.parse(await check(ctx, params, cursor, { maxEvents })) as CheckResult;
  let events = raw.events.map((input) => occurrenceOf(def.name, input, core.clock));
  let batchCursor = raw.cursor;
  let hasMore = raw.hasMore ?? false;
  if (events.length > maxEvents && events.every((event) => event.cursor !== undefined)) {
    events = events.slice(0, maxEvents);
    batchCursor = (events[events.length - 1] as EventOccurrence).cursor as string;
    hasMore = true;
  }
  const last = events[events.length - 1];
  if (last && last.cursor === undefined) last.cursor = batchCursor;
  return {
    events,
    cursor: batchCursor,
    hasMore,
    nextPollMs: raw.nextPollMs ?? def.nextPollMs ?? core.settings.nextPollMs,
  };
}

/** An error as the caller's dialect writes it on the wire (never the server's default). */
export function wireError(wire: EventsDialect, error: unknown): ErrorObject {
  // A message left at its default (the kind) takes the dialect's name: "Forbidden", not "Unauthorized".
  if (error instanceof EventsError)
    return wire.error(error.kind, error.data, error.message === error.kind ? undefined : error.message);
  return { code: -32603, message: "Internal error" };
}

/** The live subscriptions of every mode: limits, lifecycle hooks and the emit fan-out. */
export class LiveTable {
  private readonly byId = new Map<string, LiveSubscription>();
  private readonly perPrincipal = new Map<string, number>();

  constructor(
    private readonly limits: Limits,
    private readonly log: Logger,
  ) {}

  get size(): number {
    return this.byId.size;
  }

  get(id: string): LiveSubscription | undefined {
    return this.byId.get(id);
  }

  all(): LiveSubscription[] {
    return [...this.byId.values()];
  }

  /** TooManySubscriptions before anything is provisioned: which limit (its name) and its number. */
  checkLimit(principal: string | undefined): void {
    if (this.limits.total !== undefined && this.byId.size >= this.limits.total)
      throw new EventsError("TooManySubscriptions", { limit: "subscriptions", max: this.limits.total });
    const mine = this.perPrincipal.get(principal ?? "") ?? 0;
    if (this.limits.perPrincipal !== undefined && mine >= this.limits.perPrincipal)
      throw new EventsError("TooManySubscriptions", {
        limit: "subscriptions per principal",
        max: this.limits.perPrincipal,
      });
  }

  /** Checks the limit, runs `onSubscribe`, then serves the subscription. */
  async add(sub: LiveSubscription): Promise<void> {
    this.checkLimit(sub.ctx.principal);
    if (sub.def.topic) sub.topic = await sub.def.topic(sub.ctx, sub.params);
    await sub.def.onSubscribe?.(sub.ctx, sub.params, sub.id);
    this.byId.set(sub.id, sub);
    const key = sub.ctx.principal ?? "";
    this.perPrincipal.set(key, (this.perPrincipal.get(key) ?? 0) + 1);
  }

  /** Stops serving and runs `onUnsubscribe` once; a second call does nothing. */
  async remove(sub: LiveSubscription): Promise<void> {
    if (this.byId.get(sub.id) !== sub) return;
    this.byId.delete(sub.id);
    const key = sub.ctx.principal ?? "";
    this.perPrincipal.set(key, (this.perPrincipal.get(key) ?? 1) - 1);
    try {
      await sub.def.onUnsubscribe?.(sub.ctx, sub.params, sub.id);
    } catch (error) {
      this.log.warn({ err: (error as Error).message, event: sub.def.name }, "onUnsubscribe failed");
    }
  }
}

/** What one delivery may carry (SEP-3415: bodies ≤ 256 KiB; a webhook-id is printable ASCII). */
export const MAX_EVENT_BYTES = 256 * 1024;
const EVENT_ID = /^[\x21-\x7e]{1,256}$/;

/**
 * Refuses an event no delivery mode could carry, before it is buffered or sent anywhere: an
 * eventId that is not 1–256 printable ASCII characters, or a body over 256 KiB.
 */
export function validateEmit(event: EventOccurrence): void {
  if (!EVENT_ID.test(event.eventId))
    throw new EventsError(
      "InvalidParams",
      { field: "eventId" },
      "emit: eventId must be 1 to 256 printable ASCII characters without spaces",
    );
  const text = JSON.stringify(event);
  // A UTF-8 byte is at most 3 per UTF-16 unit: only a long body needs counting.
  if (text.length * 3 > MAX_EVENT_BYTES && Buffer.byteLength(text) > MAX_EVENT_BYTES)
    throw new EventsError(
      "InvalidParams",
      { field: "data", limit: MAX_EVENT_BYTES },
      `emit: an event is at most ${MAX_EVENT_BYTES} bytes of JSON`,
    );
}
