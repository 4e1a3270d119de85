import { randomInt } from "node:crypto";
import type { Database, Kysely, Sealer } from "@doorbell/store";
import type { BodyInput, EgressPolicy, HeadersLike, VerifiedStandardWebhook } from "@doorbell/webhooks";
import { type Logger, pino } from "pino";
import {
  type CoalescedEvent,
  type CoalescingLimits,
  checkedCoalescedEvent,
  coalescingLimits,
} from "./coalesce.js";
import type { Db, EngineContext } from "./context.js";
import { enqueue, enqueueMany } from "./enqueue.js";
import { DeliveryError } from "./errors.js";
import type { DeliveryEvent, EnqueueItem, EnqueueResult } from "./events.js";
import { checkedDisableAfter, type EndpointHealthOptions } from "./health.js";
import { createMetrics, type DeliveryMetrics } from "./metrics.js";
import {
  type ConfiguredOperatorWebhook,
  configureOperatorWebhook,
  type OperatorWebhook,
} from "./operator-events.js";
import type { OutboxBackend } from "./outbox/backend.js";
import { postgresOutbox } from "./outbox/postgres/index.js";
import { NOTIFY_CHANNEL } from "./outbox/postgres/notify.js";
import { sqliteOutbox } from "./outbox/sqlite/index.js";
import { channelPolicies, type EventsDeliveryOptions } from "./policy.js";
import type { RetryPolicy } from "./retry.js";
import type { DeliveryTables } from "./schema.js";
import { createStatsRecorder } from "./stats.js";
import { verifyFromSubscriber } from "./subscriber-signature.js";
import {
  approve,
  type EndOptions,
  end,
  load,
  type RenewInput,
  renew,
  type SubscribeInput,
  type SubscriptionView,
  subscribe,
  view,
} from "./subscriptions.js";
import { createWorker, sampleQueue, type Worker, type WorkerOptions } from "./worker.js";

const DAY_MS = 24 * 60 * 60 * 1000;

export { NOTIFY_CHANNEL };

/** The outbox's storage for a store: the one place that asks which database it runs on. */
export function outboxFor(store: Pick<Database<DeliveryTables>, "dialect">): OutboxBackend<EngineContext> {
  return store.dialect === "postgres" ? postgresOutbox : sqliteOutbox;
}

export interface DeliveryEngineOptions {
  /** The store handle; run `deliveryMigrations` on it first. */
  store: Database<DeliveryTables>;
  sealer: Sealer;
  /** Where deliveries may go: `productionPolicy()` in production. */
  policy: EgressPolicy;
  clock?: () => number;
  random?: () => number;
  /** The push channel's retries (default: the Standard Webhooks schedule within 24 h, push profile §6 rule 5). */
  retry?: RetryPolicy;
  /**
   * Lower than the push profile's numbers only: a longer window, a smaller daily cap. `"off"` is
   * for a forwarder relaying doorbells its upstream holder already coalesced (push profile §7
   * rule 4: it must not merge, delay or reorder them) and for benches.
   */
  coalescing?: Partial<CoalescingLimits> | "off";
  /**
   * The push channel's event that is added up while its window is closed and sent as one doorbell
   * (push profile §6 rule 6): its type, what each event adds, and the body of the doorbell sent for
   * them. Without it, or with `coalescing: "off"`, every event is queued as it comes.
   */
  coalesce?: CoalescedEvent;
  /** The push channel's delays after a first and second failed challenge (default [5000, 30000]). */
  challengeDelaysMs?: readonly number[];
  /**
   * The MCP Events channels ("mcp", "mcp-standard"): each event retried on its own (default 1 s,
   * 5 s, 30 s, 2 min within 5 min), challenge delays (default [1000, 3000]), and the sustained
   * failures that suspend delivery until a refresh (default 10 min and 10 attempts).
   */
  events?: EventsDeliveryOptions;
  /** Kept after the end for the person's receipts, then deleted; at most 30 days (default 1 day). */
  purgeAfterMs?: number;
  secretOverlapMs?: number;
  /** When an endpoint that fails every attempt is disabled (default after 5 days; health.ts). */
  endpointHealth?: EndpointHealthOptions;
  logger?: Logger;
}

export interface DeliveryEngine {
  subscribe(db: Kysely<DeliveryTables>, input: SubscribeInput): Promise<SubscriptionView>;
  renew(db: Kysely<DeliveryTables>, id: string, input: RenewInput): Promise<SubscriptionView>;
  approve(db: Kysely<DeliveryTables>, id: string): Promise<SubscriptionView>;
  end(db: Kysely<DeliveryTables>, id: string, reason: string, options: EndOptions): Promise<SubscriptionView>;
  get(db: Kysely<DeliveryTables>, id: string): Promise<SubscriptionView>;
  /**
   * Verifies a message the push subscription's receiver signed with its secret (Standard Webhooks
   * headers over the exact body); throws what failed. The secrets stay inside the engine.
   */
  verifyFromSubscriber(
    db: Kysely<DeliveryTables>,
    id: string,
    headers: HeadersLike,
    body: BodyInput,
  ): Promise<VerifiedStandardWebhook>;
  /** Inside the caller's transaction: the event commits or rolls back with the caller's change. */
  enqueue(db: Kysely<DeliveryTables>, subscriptionId: string, event: DeliveryEvent): Promise<EnqueueResult>;
  /**
   * Many events at once, inside the caller's transaction: the same as `enqueue` for each in order
   * (one result per event), with one multi-row insert and one sequence update for all of them.
   * Either items for any subscriptions, or one subscription and its events.
   */
  enqueueMany(db: Kysely<DeliveryTables>, items: readonly EnqueueItem[]): Promise<EnqueueResult[]>;
  enqueueMany(
    db: Kysely<DeliveryTables>,
    subscriptionId: string,
    events: readonly DeliveryEvent[],
  ): Promise<EnqueueResult[]>;
  /** A worker for this process; on PostgreSQL it also wakes on other processes' commits. */
  worker(options?: WorkerOptions): Worker;
  /** Processes everything due now, repeatedly, until nothing is: for tests with a fake clock. */
  runDue(): Promise<number>;
  /**
   * Adds this process's delivery figures counted since the last flush to `delivery_stats` now
   * (they are otherwise added every few seconds and when a worker stops): before reading them.
   */
  flushStats(): Promise<void>;
  /**
   * Where `endpoint.disabled`, `endpoint.recovered` and `delivery.exhausted` go (Standard Webhooks,
   * through the egress, durably: operator-events.ts); undefined stops sending them.
   */
  configureOperatorWebhook(
    webhook: OperatorWebhook | undefined,
  ): Promise<ConfiguredOperatorWebhook | undefined>;
  readonly metrics: DeliveryMetrics;
}

export function createDeliveryEngine(options: DeliveryEngineOptions): DeliveryEngine {
  const purgeAfterMs = options.purgeAfterMs ?? DAY_MS;
  if (!(purgeAfterMs >= 0 && purgeAfterMs <= 30 * DAY_MS)) {
    throw new DeliveryError(
      "ERR_DELIVERY_CONFIG",
      "purgeAfterMs is at most 30 days (push profile §6 rule 7)",
    );
  }
  const workers = new Set<{ wake(): void }>();
  const clock = options.clock ?? Date.now;
  const log = options.logger ?? pino({ level: "warn", redact: ["url", "secret", "body", "headers"] });
  const ctx: EngineContext = {
    store: options.store,
    outbox: outboxFor(options.store),
    sealer: options.sealer,
    clock,
    random: options.random ?? (() => randomInt(0, 2 ** 32) / 2 ** 32),
    policy: options.policy,
    channels: channelPolicies(options),
    limits: coalescingLimits(options.coalescing === "off" ? {} : options.coalescing),
    coalesced:
      options.coalescing === "off" || options.coalesce === undefined
        ? undefined
        : checkedCoalescedEvent(options.coalesce),
    purgeAfterMs,
    secretOverlapMs: options.secretOverlapMs ?? 60 * 60 * 1000,
    endpointDisableAfterMs: checkedDisableAfter(options.endpointHealth),
    metrics: createMetrics(() => sampleQueue({ store: options.store, clock })),
    stats: createStatsRecorder({ db: options.store.db, clock, log }),
    log,
    wake: () => {
      for (const worker of workers) worker.wake();
    },
  };
  const shared = createWorker(ctx, { concurrency: 64 });
  const as = (db: Kysely<DeliveryTables>): Db => db;

  return {
    subscribe: (db, input) => subscribe(ctx, as(db), input),
    renew: (db, id, input) => renew(ctx, as(db), id, input),
    approve: (db, id) => approve(ctx, as(db), id),
    end: (db, id, reason, endOptions) => end(ctx, as(db), id, reason, endOptions),
    get: async (db, id) => view(await load(as(db), id)),
    verifyFromSubscriber: (db, id, headers, body) => verifyFromSubscriber(ctx, as(db), id, headers, body),
    enqueue: (db, id, event) => enqueue(ctx, as(db), id, event),
    enqueueMany: (
      db: Kysely<DeliveryTables>,
      first: string | readonly EnqueueItem[],
      events?: readonly DeliveryEvent[],
    ) =>
      enqueueMany(
        ctx,
        as(db),
        typeof first === "string" ? (events ?? []).map((event) => ({ subscriptionId: first, event })) : first,
      ),
    worker(workerOptions) {
      const worker = createWorker(ctx, workerOptions);
      const wakeable = { wake: () => worker.wake() };
      let unlisten: (() => Promise<void>) | undefined;
      return {
        tick: () => worker.tick(),
        start() {
          workers.add(wakeable);
          worker.start();
          ctx.store
            .listen(NOTIFY_CHANNEL, () => worker.committed())
            .then(
              (stop) => {
                unlisten = stop;
              },
              (error: unknown) =>
                ctx.log.warn({ err: (error as Error).message }, "listening for wake-ups failed; polling"),
            );
        },
        async stop() {
          workers.delete(wakeable);
          await unlisten?.();
          await worker.stop();
          // What this process counted since the last flush, before its database may close.
          await ctx.stats.flush();
        },
      };
    },
    async runDue() {
      let total = 0;
      for (let processed = await shared.tick(); processed > 0; processed = await shared.tick())
        total += processed;
      // Its figures reach the table now, not from a timer that may outlive the database.
      await ctx.stats.flush();
      return total;
    },
    flushStats: () => ctx.stats.flush(),
    configureOperatorWebhook: (webhook) => configureOperatorWebhook(ctx, webhook),
    metrics: ctx.metrics,
  };
}
