import { postWebhook } from "@doorbell/webhooks";
import { signAttempt } from "./channels.js";
import { MATCHES_EVENT } from "./coalesce.js";
import { type EngineContext, endpointOf, secretAd } from "./context.js";
import { nextAttemptAt } from "./retry.js";
import type { OutboxRow, SubscriptionRow } from "./schema.js";
import { end } from "./subscriptions.js";

type Row = Omit<OutboxRow, "id"> & { id: number };

/** What one attempt did to the queue: go on with the next row, or stop for now. */
export type AttemptOutcome = "delivered" | "dropped" | "retry_later" | "stopped";

/** The secrets to sign with: the current one, plus the previous one while a rotation overlaps. */
export function signingSecrets(ctx: EngineContext, sub: SubscriptionRow, now: number): string[] {
  const secrets = [ctx.sealer.openText(sub.secret_sealed as string, secretAd(sub.id, "current"))];
  if (sub.previous_secret_sealed && sub.previous_secret_until !== null && now < sub.previous_secret_until) {
    secrets.push(ctx.sealer.openText(sub.previous_secret_sealed, secretAd(sub.id, "previous")));
  }
  return secrets;
}

/**
 * Sends the head row of a subscription's queue once and records the result. Success removes the
 * row; 413 drops it; 410 ends a push subscription (drops the event on MCP); anything else is
 * retried on the schedule, and exhausted retries end a push subscription with delivery-failed or
 * suspend an MCP one until its next refresh.
 */
export async function attemptRow(
  ctx: EngineContext,
  sub: SubscriptionRow,
  row: Row,
): Promise<AttemptOutcome> {
  const now = ctx.clock();
  const body = Buffer.from(row.body, "utf8");
  const headers = signAttempt({
    channel: sub.channel,
    subscriberId: sub.subscriber_id,
    webhookId: row.webhook_id,
    secrets: signingSecrets(ctx, sub, now),
    timestampSeconds: Math.floor(now / 1000),
    body,
  });
  const result = await postWebhook({ url: endpointOf(ctx, sub), headers, body, policy: ctx.policy });
  const kind = row.final === 1 ? "final" : "event";
  const outcome = result.ok ? "delivered" : result.category;
  ctx.metrics.attempts.inc({ channel: sub.channel, kind, outcome });
  ctx.metrics.attemptSeconds.observe({ channel: sub.channel, kind }, result.durationMs / 1000);
  const after = ctx.clock();

  return ctx.store.transaction(async (trx) => {
    const removeRow = () => trx.deleteFrom("delivery_outbox").where("id", "=", row.id).execute();
    if (result.ok) {
      await removeRow();
      await trx
        .updateTable("delivery_subscriptions")
        .set({
          last_delivery_at: after,
          last_error: null,
          failed_since: null,
          updated_at: after,
          ...(row.type === MATCHES_EVENT ? { matches_last_sent_at: after } : {}),
        })
        .where("id", "=", sub.id)
        .execute();
      return "delivered";
    }
    const failure = {
      last_error: result.category,
      failed_since: sub.failed_since ?? after,
      updated_at: after,
    };
    ctx.log.info(
      { subscription: sub.id, category: result.category, status: result.status, attempt: row.attempts + 1 },
      "delivery attempt failed",
    );
    if (row.final === 1 || result.status === 413) {
      await removeRow();
      await trx.updateTable("delivery_subscriptions").set(failure).where("id", "=", sub.id).execute();
      return row.final === 1 ? "stopped" : "dropped";
    }
    if (result.status === 410) {
      if (sub.channel === "push") {
        await trx.updateTable("delivery_subscriptions").set(failure).where("id", "=", sub.id).execute();
        await end(ctx, trx, sub.id, "gone", { notify: false });
        return "stopped";
      }
      await removeRow();
      await trx.updateTable("delivery_subscriptions").set(failure).where("id", "=", sub.id).execute();
      return "dropped";
    }
    const attempts = row.attempts + 1;
    const firstAttemptAt = row.first_attempt_at ?? now;
    const next = nextAttemptAt(ctx.retry, {
      attempts,
      firstAttemptAt,
      now: after,
      random: ctx.random,
      ...(result.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: result.retryAfterSeconds }),
    });
    if (next === undefined) {
      await trx.updateTable("delivery_subscriptions").set(failure).where("id", "=", sub.id).execute();
      if (sub.channel === "push") {
        await end(ctx, trx, sub.id, "delivery-failed", { notify: true });
      } else {
        // The MCP sketch: the event is given up (the watermark moves on) and delivery is suspended.
        await removeRow();
        await trx
          .updateTable("delivery_subscriptions")
          .set({ delivery_active: 0 })
          .where("id", "=", sub.id)
          .execute();
      }
      return "stopped";
    }
    await trx
      .updateTable("delivery_outbox")
      .set({ attempts, first_attempt_at: firstAttemptAt, next_attempt_at: next })
      .where("id", "=", row.id)
      .execute();
    await trx.updateTable("delivery_subscriptions").set(failure).where("id", "=", sub.id).execute();
    return "retry_later";
  });
}
