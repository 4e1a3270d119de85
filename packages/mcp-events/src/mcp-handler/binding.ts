/**
 * Doorbell as the storage and delivery behind Vercel `mcp-handler`'s
 * `experimental_registerMcpEvents`: `subscriptions` keeps each subscription in `@doorbell/store`
 * (SQLite or PostgreSQL, shared by every process on the database) with a fencing token per
 * reservation, and `delivery` proves each callback with a signed verification challenge sent by
 * `@doorbell/delivery` on its "mcp-standard" channel (Standard Webhooks, SEP-3415 bodies), under
 * an egress policy. `emit` queues an event for every live subscription to it in the outbox, and
 * the engine's worker delivers each once, with retries, suspension and `deliveryStatus`.
 */

import { randomUUID } from "node:crypto";
import {
  createDeliveryEngine,
  type DeliveryEngine,
  type DeliveryTables,
  type RetryPolicy,
  type SubscriptionView,
  showDelivery,
  type Worker,
} from "@doorbell/delivery";
import { CodedError } from "@doorbell/errors";
import { asTables, type Database, type Kysely, type Sealer } from "@doorbell/store";
import { checkUrl, type EgressPolicy } from "@doorbell/webhooks";
import { ProtocolError } from "@modelcontextprotocol/server";
import {
  type ExperimentalMcpEventDefinition,
  ExperimentalMcpEventDeliveryError,
  type ExperimentalMcpEventsOptions,
  type ExperimentalMcpSubscriptionState,
  type ExperimentalMcpSubscriptionStore,
  type ExperimentalMcpWebhookDelivery,
  type ExperimentalMcpWebhookFailure,
  experimental_registerMcpEvents,
  experimental_validateMcpEventDelivery,
} from "mcp-handler";
import pino, { type Logger } from "pino";
import { canonicalJson, digest } from "../server/canonical.js";
import { failureReason } from "./failure-reason.js";
import {
  type McpHandlerSubscriptionRow,
  type McpHandlerTables,
  subscriptionRows,
} from "./subscription-rows.js";

export type McpHandlerEventsTables = DeliveryTables & McpHandlerTables;

export interface McpHandlerEventsOptions {
  /** Migrated with `deliveryMigrations` and `mcpHandlerMigrations`; every process on it shares the subscriptions. */
  store: Database<McpHandlerEventsTables>;
  /** Seals URLs and secrets at rest; every process on the store needs the same keys. */
  sealer: Sealer;
  /** The event catalog given to `experimental_registerMcpEvents`, and what `emit` validates against. */
  events: readonly ExperimentalMcpEventDefinition[];
  /** Where callbacks may go: `productionPolicy()` unless a developer asks for `developmentPolicy()`. */
  policy: EgressPolicy;
  /** How long a reservation holds before it is reclaimed (default 2 min). */
  reservationMs?: number;
  /** How long `verifyEndpoint` waits for the challenge's answer (default 10 s). */
  verifyTimeoutMs?: number;
  /** Subscriptions and reservations one principal may hold (default 100). */
  maxSubscriptionsPerPrincipal?: number;
  /** How each event is retried (default: the engine's MCP Events policy). */
  retry?: RetryPolicy;
  /** Run a delivery worker in this process (default true). */
  worker?: boolean;
  clock?: () => number;
  logger?: Logger;
}

export interface EmitOptions {
  /** The id receivers deduplicate by; one is made when absent. */
  eventId?: string;
  /** When it happened (ISO 8601); now by default. */
  timestamp?: string;
  /** Which subscriptions' arguments this event matches (default: every subscription to it). */
  matches?: (args: Record<string, unknown>) => boolean;
}

export interface McpHandlerEvents {
  readonly events: readonly ExperimentalMcpEventDefinition[];
  readonly subscriptions: ExperimentalMcpSubscriptionStore;
  readonly delivery: ExperimentalMcpWebhookDelivery;
  /** `experimental_registerMcpEvents(server, …)` with this store, delivery and catalog. */
  register(
    server: Parameters<typeof experimental_registerMcpEvents>[0],
    options: Pick<ExperimentalMcpEventsOptions, "getPrincipal" | "ttl">,
  ): void;
  /** Queues the event for every live, still-authorized subscription; resolves with how many. */
  emit(name: string, data: Record<string, unknown>, options?: EmitOptions): Promise<number>;
  /** Deletes lapsed subscriptions and abandoned reservations (also run every minute). */
  sweep(): Promise<number>;
  /** The delivery engine, e.g. to read its metrics. */
  readonly engine: DeliveryEngine;
  close(): Promise<void>;
}

const CHANNEL = "mcp-standard";
const SWEEP_INTERVAL_MS = 60_000;
/** Failed verifications one (principal, url) may cause per window before it is refused unasked. */
const FAILED_VERIFICATIONS = { max: 5, windowMs: 10 * 60_000 };
/** A candidate delivery made to verify a callback lives this long unless a commit adopts it. */
const CANDIDATE_LEASE_MS = 5 * 60_000;

/** A subscription store or delivery failure with a stable code (mcp-handler answers it as -32603). */
export class McpHandlerEventsError extends CodedError<
  "ERR_MCP_HANDLER_STALE_OPERATION" | "ERR_MCP_HANDLER_NO_EXPIRY" | "ERR_MCP_HANDLER_UNKNOWN_EVENT"
> {
  override readonly name = "McpHandlerEventsError";
}

const deliveriesIn = (db: Kysely<McpHandlerEventsTables>) => asTables<DeliveryTables>(db);
const rowsIn = (db: Kysely<McpHandlerEventsTables>) => asTables<McpHandlerTables>(db);

export function mcpHandlerEvents(options: McpHandlerEventsOptions): McpHandlerEvents {
  const b = bindingOf(options);
  const subscriptions = subscriptionStore(b);
  const delivery: ExperimentalMcpWebhookDelivery = {
    verifyEndpoint: (target, context) => verifyEndpoint(b, target, context),
  };
  const sweep = () => sweepStale(b);
  const timer = setInterval(() => {
    sweep().catch((error: unknown) => b.log.warn({ err: (error as Error).message }, "sweep failed"));
  }, SWEEP_INTERVAL_MS);
  timer.unref();

  return {
    events: options.events,
    subscriptions,
    delivery,
    engine: b.engine,
    register(server, registerOptions) {
      experimental_registerMcpEvents(server, {
        ...registerOptions,
        events: options.events,
        subscriptions,
        delivery,
      });
    },
    emit: (name, data, emitOptions) => emitEvent(b, name, data, emitOptions),
    sweep,
    async close() {
      clearInterval(timer);
      await b.worker?.stop();
    },
  };
}

/** What the subscription store, the delivery and emit share. */
interface Binding {
  readonly store: Database<McpHandlerEventsTables>;
  readonly sealer: Sealer;
  readonly policy: EgressPolicy;
  readonly clock: () => number;
  readonly log: Logger;
  readonly reservationMs: number;
  readonly maxPerPrincipal: number;
  readonly verifyTimeoutMs: number;
  readonly catalog: ReadonlyMap<string, ExperimentalMcpEventDefinition>;
  readonly engine: DeliveryEngine;
  readonly worker: Worker | undefined;
  /**
   * Verified callbacks waiting for their commit, per (key, secret): prepare, verifyEndpoint and
   * upsert of one events/subscribe run in the same process, one after another.
   */
  readonly candidates: Map<string, { deliveryId: string; until: number }>;
  /** Recent failed challenges per (principal, url): a callback that keeps failing is not contacted again. */
  readonly failures: Map<string, { count: number; since: number }>;
}

function bindingOf(options: McpHandlerEventsOptions): Binding {
  const { store, sealer, policy } = options;
  const clock = options.clock ?? Date.now;
  const log = options.logger ?? pino({ level: "warn", redact: ["url", "secret"] });
  const engine = createDeliveryEngine({
    store: asTables<DeliveryTables>(store),
    sealer,
    policy,
    clock,
    logger: log,
    ...(options.retry ? { events: { retry: options.retry } } : {}),
  });
  const worker: Worker | undefined = options.worker === false ? undefined : engine.worker();
  worker?.start();
  return {
    store,
    sealer,
    policy,
    clock,
    log,
    reservationMs: options.reservationMs ?? 2 * 60_000,
    maxPerPrincipal: options.maxSubscriptionsPerPrincipal ?? 100,
    verifyTimeoutMs: options.verifyTimeoutMs ?? 10_000,
    catalog: new Map(options.events.map((event) => [event.name, event])),
    engine,
    worker,
    candidates: new Map(),
    failures: new Map(),
  };
}

const candidateKey = (id: string, secret: string) => digest(id, secret);

function secretCheck(b: Binding, id: string, secret: string): string {
  return b.sealer.seal(digest(secret), `mcp-handler.secret:${id}`);
}

function sameSecret(b: Binding, row: McpHandlerSubscriptionRow, secret: string): boolean {
  if (row.secret_check === null) return false;
  try {
    return b.sealer.openText(row.secret_check, `mcp-handler.secret:${row.id}`) === digest(secret);
  } catch {
    return false;
  }
}

function viewOf(b: Binding, db: Kysely<McpHandlerEventsTables>, id: string) {
  return b.engine.get(deliveriesIn(db), id).catch(() => undefined);
}

function subscriptionStore(b: Binding): ExperimentalMcpSubscriptionStore {
  return {
    async prepare(key) {
      const now = b.clock();
      const existing = await subscriptionRows.find(rowsIn(b.store.db), key.id);
      // Admission before any network work; a refresh of a key already held is not a new one.
      if (
        !existing &&
        (await subscriptionRows.countFor(rowsIn(b.store.db), key.principal)) >= b.maxPerPrincipal
      )
        throw new ProtocolError(-32013, "Too many subscriptions for this principal");
      const operation = `op_${randomUUID()}`;
      await subscriptionRows.reserve(
        rowsIn(b.store.db),
        { id: key.id, principal: key.principal, name: key.name, arguments: canonicalJson(key.arguments) },
        operation,
        now + b.reservationMs,
        now,
      );
      return operation;
    },

    upsert: (subscription, _context, operationId) => upsertSubscription(b, subscription, operationId),

    async remove(key) {
      const now = b.clock();
      return b.store.transaction(async (trx) => {
        const row = await subscriptionRows.remove(rowsIn(trx), key.id);
        if (!row) return false;
        if (row.delivery_id !== null)
          await b.engine
            .end(deliveriesIn(trx), row.delivery_id, "unsubscribed", { notify: false })
            .catch(() => undefined);
        return row.delivery_id !== null || row.operation_expires_at > now;
      });
    },
  };
}

/** Commits a verified subscribe: renews the live delivery, adopts the candidate, or subscribes anew. */
async function upsertSubscription(
  b: Binding,
  subscription: Parameters<ExperimentalMcpSubscriptionStore["upsert"]>[0],
  operationId: Parameters<ExperimentalMcpSubscriptionStore["upsert"]>[2],
): Promise<ExperimentalMcpSubscriptionState> {
  if (subscription.refreshBefore === null)
    throw new McpHandlerEventsError(
      "ERR_MCP_HANDLER_NO_EXPIRY",
      "subscriptions without expiry are not supported: leave ttl.allowNoExpiry off",
    );
  const refreshBefore = Date.parse(subscription.refreshBefore);
  const candidate = b.candidates.get(candidateKey(subscription.id, subscription.secret));
  const state = await b.store.transaction(async (trx) => {
    const now = b.clock();
    const row = await subscriptionRows.claim(rowsIn(trx), subscription.id, operationId, now);
    if (!row)
      throw new McpHandlerEventsError(
        "ERR_MCP_HANDLER_STALE_OPERATION",
        "this subscribe was superseded, removed or took too long",
      );
    const current = row.delivery_id === null ? undefined : await viewOf(b, trx, row.delivery_id);
    const lease = { expiresAt: refreshBefore, refreshBefore };
    let view: SubscriptionView;
    let fresh = false;
    if (current && current.status !== "ended") {
      // A refresh: new lease, suspended delivery resumed, the secret rotated only if it changed.
      const rotated = !sameSecret(b, row, subscription.secret);
      view = await b.engine.renew(deliveriesIn(trx), current.id, {
        ...lease,
        ...(rotated ? { secret: subscription.secret } : {}),
      });
    } else if (candidate && candidate.until > now) {
      view = await b.engine.renew(deliveriesIn(trx), candidate.deliveryId, lease);
      fresh = true;
    } else {
      // Verified by a cached consent: the engine challenges again before it delivers anything.
      view = await b.engine.subscribe(deliveriesIn(trx), {
        channel: CHANNEL,
        url: subscription.url,
        secret: subscription.secret,
        ...lease,
        requiresApproval: false,
        subscriberId: subscription.id,
      });
      fresh = true;
    }
    const granted = await subscriptionRows.grant(rowsIn(trx), subscription.id, operationId, {
      delivery_id: view.id,
      secret_check: secretCheck(b, subscription.id, subscription.secret),
      refresh_before: refreshBefore,
      updated_at: now,
    });
    if (!granted)
      throw new McpHandlerEventsError("ERR_MCP_HANDLER_STALE_OPERATION", "this subscribe was superseded");
    return { state: subscriptionState(view, fresh && subscription.cursor !== null), deliveryId: view.id };
  });
  b.candidates.delete(candidateKey(subscription.id, subscription.secret));
  // A rotation's challenge was sent by a candidate the live delivery did not need.
  if (candidate && candidate.deliveryId !== state.deliveryId)
    await b.engine
      .end(deliveriesIn(b.store.db), candidate.deliveryId, "replaced", { notify: false })
      .catch(() => undefined);
  return state.state;
}

async function verifyEndpoint(
  b: Binding,
  target: Parameters<ExperimentalMcpWebhookDelivery["verifyEndpoint"]>[0],
  context: Parameters<ExperimentalMcpWebhookDelivery["verifyEndpoint"]>[1],
): ReturnType<ExperimentalMcpWebhookDelivery["verifyEndpoint"]> {
  const verdict = checkUrl(target.url, b.policy);
  if (!verdict.ok) {
    b.log.warn({ reason: verdict.reason }, "callback refused by the egress policy");
    return { verified: false, reason: "connection_refused" };
  }
  // Consent already proven for this key and secret: a refresh sends no second challenge.
  const existing = await subscriptionRows.find(rowsIn(b.store.db), target.id);
  if (existing?.delivery_id && sameSecret(b, existing, target.secret)) {
    const view = await viewOf(b, b.store.db, existing.delivery_id);
    if (view?.verified && view.status !== "ended") return { verified: true };
  }
  const now = b.clock();
  const endpoint = digest(target.principal, target.url);
  const failed = b.failures.get(endpoint);
  if (
    failed &&
    now - failed.since < FAILED_VERIFICATIONS.windowMs &&
    failed.count >= FAILED_VERIFICATIONS.max
  )
    return { verified: false, reason: "challenge_failed" };
  const candidate = await b.engine.subscribe(deliveriesIn(b.store.db), {
    channel: CHANNEL,
    url: target.url,
    secret: target.secret,
    expiresAt: now + CANDIDATE_LEASE_MS,
    refreshBefore: now + CANDIDATE_LEASE_MS,
    requiresApproval: false,
    subscriberId: target.id,
  });
  const failure = await verification(b, candidate.id, context.signal);
  if (failure !== undefined) {
    await b.engine.end(deliveriesIn(b.store.db), candidate.id, "challenge_failed", { notify: false });
    recordFailure(b, endpoint, now);
    return { verified: false, reason: failure };
  }
  forgetLapsedCandidates(b, now);
  b.candidates.set(candidateKey(target.id, target.secret), {
    deliveryId: candidate.id,
    until: now + CANDIDATE_LEASE_MS,
  });
  return { verified: true };
}

function forgetLapsedCandidates(b: Binding, now: number): void {
  for (const [key, value] of b.candidates) if (value.until <= now) b.candidates.delete(key);
}

function recordFailure(b: Binding, endpoint: string, now: number): void {
  const previous = b.failures.get(endpoint);
  const fresh = previous === undefined || now - previous.since >= FAILED_VERIFICATIONS.windowMs;
  if (b.failures.size > 10_000) b.failures.clear();
  b.failures.set(
    endpoint,
    fresh ? { count: 1, since: now } : { count: previous.count + 1, since: previous.since },
  );
}

/** Undefined once the challenge passed; else why not, in the six categories. */
async function verification(
  b: Binding,
  deliveryId: string,
  signal: AbortSignal,
): Promise<ExperimentalMcpWebhookFailure | undefined> {
  const deadline = Date.now() + b.verifyTimeoutMs;
  for (;;) {
    if (!b.worker) await b.engine.runDue();
    const view = await b.engine.get(deliveriesIn(b.store.db), deliveryId);
    if (view.verified) return undefined;
    if (view.status === "ended" || Date.now() >= deadline || signal.aborted) break;
    await new Promise((resolveWait) => setTimeout(resolveWait, 20));
  }
  const attempts = (await showDelivery(deliveriesIn(b.store.db), deliveryId, 1)).attempts;
  const category = attempts[0]?.category;
  if (category === undefined) return "timeout";
  return category.startsWith("http_") ? "challenge_failed" : failureReason(category);
}

async function emitEvent(
  b: Binding,
  name: string,
  data: Record<string, unknown>,
  emitOptions: EmitOptions = {},
): Promise<number> {
  const event = b.catalog.get(name);
  if (!event) throw new McpHandlerEventsError("ERR_MCP_HANDLER_UNKNOWN_EVENT", `no event named "${name}"`);
  const eventId = emitOptions.eventId ?? `evt_${randomUUID()}`;
  const timestamp = emitOptions.timestamp ?? new Date(b.clock()).toISOString();
  const targets: string[] = [];
  for (const row of await subscriptionRows.live(rowsIn(b.store.db), name, b.clock())) {
    const args = JSON.parse(row.arguments) as Record<string, unknown>;
    if (emitOptions.matches && !emitOptions.matches(args)) continue;
    try {
      // Schema, expiry and the principal's current authorization, as mcp-handler checks them.
      await experimental_validateMcpEventDelivery({
        event,
        subscription: {
          principal: row.principal,
          name: row.name,
          arguments: args,
          refreshBefore: new Date(row.refresh_before as number).toISOString(),
        },
        payload: data,
      });
    } catch (error) {
      if (!(error instanceof ExperimentalMcpEventDeliveryError)) throw error;
      b.log.warn({ event: name, code: error.code }, "event not delivered to a subscription");
      continue;
    }
    targets.push(row.delivery_id as string);
  }
  if (targets.length === 0) return 0;
  await b.store.transaction((trx) =>
    b.engine.enqueueMany(
      deliveriesIn(trx),
      targets.map((subscriptionId) => ({
        subscriptionId,
        event: { type: name, eventId, timestamp, data },
      })),
    ),
  );
  return targets.length;
}

async function sweepStale(b: Binding): Promise<number> {
  let removed = 0;
  for (const row of await subscriptionRows.stale(rowsIn(b.store.db), b.clock())) {
    if (!(await subscriptionRows.removeIfUnchanged(rowsIn(b.store.db), row))) continue;
    removed += 1;
    if (row.delivery_id !== null)
      await b.engine
        .end(deliveriesIn(b.store.db), row.delivery_id, "expired", { notify: false })
        .catch(() => undefined);
  }
  return removed;
}

/** What mcp-handler returns to the client: no replay (cursor null), and the delivery's health. */
function subscriptionState(view: SubscriptionView, cursorRefused: boolean): ExperimentalMcpSubscriptionState {
  const status = view.deliveryStatus;
  return {
    cursor: null,
    // A new subscription asked to replay from a cursor: this binding keeps no event history.
    truncated: cursorRefused,
    deliveryStatus: {
      active: status.active,
      lastError: view.verified ? (status.lastError === null ? null : failureReason(status.lastError)) : null,
      ...(status.lastDeliveryAt === null
        ? {}
        : { lastDeliveryAt: new Date(status.lastDeliveryAt).toISOString() }),
      ...(status.failedSince === null ? {} : { failedSince: new Date(status.failedSince).toISOString() }),
    },
  };
}
