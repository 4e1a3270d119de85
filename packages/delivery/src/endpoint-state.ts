/**
 * The moments an endpoint's standing changes: disabled for failing too long (on the failure path,
 * attempt.ts), and recovered at its first success after that (worker.ts). Each writes its
 * change and its operator event in one transaction. The operator's `enable`: enable.ts.
 */
import { deadLetter } from "./attempt-log.js";
import type { Db, EngineContext } from "./context.js";
import type { FailurePlan } from "./decide.js";
import type { Disabling } from "./health.js";
import { emitOperatorEvent, endpointRef } from "./operator-events.js";
import type { OutboxRow, SubscriptionRow } from "./schema.js";
import { end } from "./subscriptions.js";

/**
 * The first success after the endpoint was disabled: the mark is cleared and `endpoint.recovered`
 * queued, once (of two processes, the one whose update finds the mark). A success of an ended
 * subscription (its last `subscription.ended`) recovers nothing.
 */
export async function recordRecovery(ctx: EngineContext, sub: SubscriptionRow, at: number): Promise<void> {
  if (sub.disabled_at === null || sub.status === "ended") return;
  await ctx.store.transaction(async (trx) => {
    const cleared = await trx
      .updateTable("delivery_subscriptions")
      .set({ disabled_at: null, disabled_reason: null })
      .where("id", "=", sub.id)
      .where("disabled_at", "is not", null)
      .returning("disabled_at")
      .executeTakeFirst();
    if (cleared === undefined) return;
    ctx.log.info({ subscription: sub.id }, "endpoint recovered");
    await emitOperatorEvent(ctx, trx, {
      type: "endpoint.recovered",
      endpoint: endpointRef(sub),
      disabledAt: Number(sub.disabled_at),
      at,
    });
  });
}

export interface EndpointFailure {
  sub: SubscriptionRow;
  row: Pick<OutboxRow, "webhook_id" | "type" | "body" | "first_attempt_at" | "attempts">;
  /** What the failure does to its event (decide.ts). */
  plan: FailurePlan;
  disabling: Disabling | undefined;
  category: string;
  at: number;
}

/**
 * What a failed attempt means for the endpoint, in the failure's transaction after the event's
 * own fate was written: `delivery.exhausted` for a doorbell given up on, and the disabling (the
 * mark, a push subscription's end, `endpoint.disabled`).
 */
export async function recordEndpointFailure(
  ctx: EngineContext,
  db: Db,
  failure: EndpointFailure,
): Promise<void> {
  const { sub, row, disabling, at } = failure;
  const { decision } = failure.plan;
  if (sub.channel === "operator") return;
  const endpoint = endpointRef(sub);
  // Push ended for failing too long while its head still had retries: that doorbell is given up too.
  const endsEarly = disabling?.kind === "end" && decision.kind !== "end";
  if (endsEarly) {
    await deadLetter(db, {
      subscriptionId: sub.id,
      row,
      attempts: row.attempts + 1,
      category: failure.category,
      reason: "retries-exhausted",
      at,
    });
  }
  if (failure.plan.deadLetter === "retries-exhausted" || endsEarly) {
    await emitOperatorEvent(ctx, db, {
      type: "delivery.exhausted",
      endpoint,
      webhookId: row.webhook_id,
      eventType: row.type,
      attempts: row.attempts + 1,
      category: failure.category,
      firstAttemptAt: row.first_attempt_at === null ? null : Number(row.first_attempt_at),
      at,
    });
  }
  if (disabling === undefined) return;
  if (endsEarly) await end(ctx, db, sub.id, "delivery-failed", { notify: true });
  if (!disabling.announce) return;
  await db
    .updateTable("delivery_subscriptions")
    .set({ disabled_at: at, disabled_reason: disabling.reason })
    .where("id", "=", sub.id)
    .execute();
  ctx.log.warn({ subscription: sub.id, reason: disabling.reason }, "endpoint disabled");
  await emitOperatorEvent(ctx, db, {
    type: "endpoint.disabled",
    endpoint,
    reason: disabling.reason,
    category: failure.category,
    failingSince: decision.streak.failedSince,
    lastSuccessAt: sub.last_delivery_at === null ? null : Number(sub.last_delivery_at),
    at,
  });
}
