import { Counter, Gauge, Histogram, Registry } from "prom-client";

/** Numbers only: no subscription id, URL, host or secret ever becomes a label (push profile §6 rule 8). */
export interface DeliveryMetrics {
  readonly registry: Registry;
  readonly enqueued: Counter<"channel" | "result">;
  readonly attempts: Counter<"channel" | "kind" | "outcome">;
  readonly attemptSeconds: Histogram<"channel" | "kind">;
  readonly ended: Counter<"reason">;
  /** Operational events (operator-events.ts), by type, whether or not a webhook takes them. */
  readonly operatorEvents: Counter<"type">;
  readonly hostDeferrals: Counter;
  readonly queueDepth: Gauge;
  readonly oldestDueSeconds: Gauge;
}

export function createMetrics(
  sample: () => Promise<{ depth: number; oldestDueMs: number }>,
): DeliveryMetrics {
  const registry = new Registry();
  const registers = [registry];
  return {
    registry,
    enqueued: new Counter({
      name: "doorbell_delivery_enqueued_total",
      help: "Events accepted for delivery, by channel and whether they were queued, coalesced or dropped.",
      labelNames: ["channel", "result"],
      registers,
    }),
    attempts: new Counter({
      name: "doorbell_delivery_attempts_total",
      help: "Delivery and challenge attempts by outcome category.",
      labelNames: ["channel", "kind", "outcome"],
      registers,
    }),
    attemptSeconds: new Histogram({
      name: "doorbell_delivery_attempt_seconds",
      help: "Time of one delivery attempt, from connect to the last byte read.",
      labelNames: ["channel", "kind"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    ended: new Counter({
      name: "doorbell_delivery_subscriptions_ended_total",
      help: "Subscriptions ended, by reason.",
      labelNames: ["reason"],
      registers,
    }),
    hostDeferrals: new Counter({
      name: "doorbell_delivery_host_busy_deferrals_total",
      help: "Subscriptions put back without an attempt because their destination host had its per-host cap in flight.",
      registers,
    }),
    operatorEvents: new Counter({
      name: "doorbell_delivery_operator_events_total",
      help: "Operational events: endpoint.disabled, endpoint.recovered and delivery.exhausted.",
      labelNames: ["type"],
      registers,
    }),
    queueDepth: new Gauge({
      name: "doorbell_delivery_queue_depth",
      help: "Events waiting in the outbox.",
      registers,
      async collect() {
        this.set((await sample()).depth);
      },
    }),
    oldestDueSeconds: new Gauge({
      name: "doorbell_delivery_oldest_due_age_seconds",
      help: "How long the oldest due event has been waiting.",
      registers,
      async collect() {
        this.set((await sample()).oldestDueMs / 1000);
      },
    }),
  };
}
