import type { Database, Kysely, Sealer } from "@doorbell/store";
import type { EgressPolicy } from "@doorbell/webhooks";
import type { Logger } from "pino";
import type { CoalescedEvent, CoalescingLimits } from "./coalesce.js";
import type { DeliveryMetrics } from "./metrics.js";
import type { OutboxBackend } from "./outbox/backend.js";
import type { ChannelPolicies } from "./policy.js";
import type { DeliveryTables } from "./schema.js";
import type { StatsRecorder } from "./stats.js";

export type Db = Kysely<DeliveryTables>;

/** Everything the engine's parts share; built once by `createDeliveryEngine`. */
export interface EngineContext {
  readonly store: Database<DeliveryTables>;
  /** The outbox's storage for the store's engine, chosen once (engine.ts). */
  readonly outbox: OutboxBackend<EngineContext>;
  readonly sealer: Sealer;
  /** Epoch milliseconds. */
  readonly clock: () => number;
  /** Uniform in [0, 1), for jitter. */
  readonly random: () => number;
  readonly policy: EgressPolicy;
  /** Each channel's order, retries, challenge delays and failure rules (policy.ts). */
  readonly channels: ChannelPolicies;
  readonly limits: CoalescingLimits;
  /**
   * The push channel's coalesced event, as the caller defines it; undefined when nothing coalesces
   * (a relay whose upstream already coalesced: every event queues as it comes).
   */
  readonly coalesced: CoalescedEvent | undefined;
  /** How long an ended subscription's secret and endpoint are kept (at most 30 days). */
  readonly purgeAfterMs: number;
  /** How long the previous secret keeps signing after a rotation. */
  readonly secretOverlapMs: number;
  /** Failing every attempt for this long disables an endpoint (health.ts). */
  readonly endpointDisableAfterMs: number;
  readonly metrics: DeliveryMetrics;
  /** Each attempt's outcome and time, counted in memory for the operator's chart (stats.ts). */
  readonly stats: StatsRecorder;
  readonly log: Logger;
  /** Tells local workers that something became due. */
  readonly wake: () => void;
}

export const secretAd = (id: string, which: "current" | "previous" | "pending" | "url") =>
  `delivery.subscription.${which}:${id}`;

/** The subscription's endpoint, opened from its sealed form. */
export const endpointOf = (
  ctx: Pick<EngineContext, "sealer">,
  sub: { id: string; url_sealed: string | null },
): string => ctx.sealer.openText(sub.url_sealed as string, secretAd(sub.id, "url"));
