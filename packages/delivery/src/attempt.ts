import { postWebhook } from "@doorbell/webhooks";
import { type DeadLetterReason, deadLetter, logFailedAttempt } from "./attempt-log.js";
import { type AttemptSigner, attemptSigner, followsMcpRules, signAttempt } from "./channels.js";
import { MATCHES_EVENT } from "./coalesce.js";
import { type EngineContext, endpointOf, secretAd } from "./context.js";
import { recordDelivered } from "./delivered.js";
import { sending } from "./group-commit.js";
import { nextAttemptAt } from "./retry.js";
import type { OutboxRow, SubscriptionRow } from "./schema.js";
import { end } from "./subscriptions.js";

/** The columns of an outbox row an attempt needs (the worker reads no more: see `headRows`). */
export type HeadRow = Pick<
  OutboxRow,
  "seq" | "webhook_id" | "type" | "body" | "attempts" | "first_attempt_at" | "next_attempt_at" | "final"
> & { id: number };

/**
 * What one attempt did to the queue: go on with the next row, or stop for now. `gone`: delivered,
 * but the queue was removed meanwhile (the subscription ended), so stop.
 */
export type AttemptOutcome = "delivered" | "gone" | "dropped" | "retry_later" | "stopped";

/** The secrets to sign with: the current one, plus the previous one while a rotation overlaps. */
export function signingSecrets(ctx: EngineContext, sub: SubscriptionRow, now: number): string[] {
  const secrets = [ctx.sealer.openText(sub.secret_sealed as string, secretAd(sub.id, "current"))];
  if (sub.previous_secret_sealed && sub.previous_secret_until !== null && now < sub.previous_secret_until) {
    secrets.push(ctx.sealer.openText(sub.previous_secret_sealed, secretAd(sub.id, "previous")));
  }
  return secrets;
}

/** A subscription's endpoint and signing secrets, opened from their sealed forms. */
export interface OpenedKeys {
  url: string;
  current: string;
  previous: string | null;
  previousUntil: number | null;
  /** The signer for the secrets in force at `now`, built once per set of secrets. */
  signer(now: number): AttemptSigner;
}

/**
 * Opens the endpoint and secrets once, for every attempt of one claim (each open is an AES-GCM
 * decryption, each signer load a KeyObject).
 */
export function openKeys(ctx: EngineContext, sub: SubscriptionRow): OpenedKeys {
  const current = ctx.sealer.openText(sub.secret_sealed as string, secretAd(sub.id, "current"));
  const previous = sub.previous_secret_sealed
    ? ctx.sealer.openText(sub.previous_secret_sealed, secretAd(sub.id, "previous"))
    : null;
  const previousUntil = sub.previous_secret_until;
  let alone: AttemptSigner | undefined;
  let both: AttemptSigner | undefined;
  return {
    url: endpointOf(ctx, sub),
    current,
    previous,
    previousUntil,
    signer(now) {
      if (previous !== null && previousUntil !== null && now < previousUntil) {
        both ??= attemptSigner(sub.channel, sub.subscriber_id, [current, previous]);
        return both;
      }
      alone ??= attemptSigner(sub.channel, sub.subscriber_id, [current]);
      return alone;
    },
  };
}

interface AttemptMetrics {
  attempts: { inc(): void };
  seconds: { observe(value: number): void };
}
const metricChildren = new WeakMap<EngineContext, Map<string, AttemptMetrics>>();

/** The labelled metric children of one kind of outcome, built once instead of label objects per attempt. */
function attemptMetrics(ctx: EngineContext, channel: string, kind: string, outcome: string): AttemptMetrics {
  let children = metricChildren.get(ctx);
  if (!children) {
    children = new Map();
    metricChildren.set(ctx, children);
  }
  const key = `${channel} ${kind} ${outcome}`;
  let found = children.get(key);
  if (!found) {
    found = {
      attempts: ctx.metrics.attempts.labels({ channel, kind, outcome }),
      seconds: ctx.metrics.attemptSeconds.labels({ channel, kind }),
    };
    children.set(key, found);
  }
  return found;
}

/**
 * Sends the head row of a subscription's queue once and records the result. Success removes the
 * row (the worker writes deliveryStatus when it releases the subscription); 413 drops it; 410
 * ends a push subscription (drops the event on both MCP channels); anything else is retried on the
 * schedule, and exhausted retries end a push subscription with delivery-failed or suspend an MCP
 * one until its next refresh. `keys`: the claim's opened endpoint and secrets (opened here when absent).
 */
export async function attemptRow(
  ctx: EngineContext,
  sub: SubscriptionRow,
  row: HeadRow,
  keys?: OpenedKeys,
): Promise<AttemptOutcome> {
  const now = ctx.clock();
  const body = Buffer.from(row.body, "utf8");
  const timestampSeconds = Math.floor(now / 1000);
  const headers = keys
    ? keys.signer(now)(row.webhook_id, timestampSeconds, body)
    : signAttempt({
        channel: sub.channel,
        subscriberId: sub.subscriber_id,
        webhookId: row.webhook_id,
        secrets: signingSecrets(ctx, sub, now),
        timestampSeconds,
        body,
      });
  const url = keys ? keys.url : endpointOf(ctx, sub);
  const answered = sending(ctx);
  let result: Awaited<ReturnType<typeof postWebhook>>;
  try {
    result = await postWebhook({ url, headers, body, policy: ctx.policy });
  } finally {
    answered();
  }
  const kind = row.final === 1 ? "final" : "event";
  const outcome = result.ok ? "delivered" : result.category;
  const metrics = attemptMetrics(ctx, sub.channel, kind, outcome);
  metrics.attempts.inc();
  metrics.seconds.observe(result.durationMs / 1000);
  const after = ctx.clock();

  if (result.ok) {
    const recorded = await recordDelivered(ctx, {
      rowId: row.id,
      seq: row.seq,
      subscriptionId: sub.id,
      at: after,
      matches: row.type === MATCHES_EVENT,
    });
    return recorded ? "delivered" : "gone";
  }
  return ctx.store.transaction(async (trx) => {
    const removeRow = () => trx.deleteFrom("delivery_outbox").where("id", "=", row.id).execute();
    const failure = {
      last_error: result.category,
      failed_since: sub.failed_since ?? after,
      updated_at: after,
    };
    ctx.log.info(
      { subscription: sub.id, category: result.category, status: result.status, attempt: row.attempts + 1 },
      "delivery attempt failed",
    );
    // The operator's delivery log (attempt-log.ts): this attempt, and the doorbell if given up.
    await logFailedAttempt(trx, {
      subscriptionId: sub.id,
      kind,
      type: row.type,
      webhookId: row.webhook_id,
      attempt: row.attempts + 1,
      category: result.category,
      httpStatus: result.status,
      at: after,
    });
    const giveUp = (reason: DeadLetterReason) =>
      row.final === 1
        ? Promise.resolve()
        : deadLetter(trx, {
            subscriptionId: sub.id,
            row,
            attempts: row.attempts + 1,
            category: result.category,
            reason,
            at: after,
          });
    // 413 is final for that event under MCP Events only; the push profile retries every answer
    // other than 2xx (§6 rule 5), 410 aside (issue 16 item 13).
    if (row.final === 1 || (result.status === 413 && followsMcpRules(sub.channel))) {
      await giveUp("too-large");
      await removeRow();
      await trx.updateTable("delivery_subscriptions").set(failure).where("id", "=", sub.id).execute();
      return row.final === 1 ? "stopped" : "dropped";
    }
    if (result.status === 410) {
      await giveUp("gone");
      if (followsMcpRules(sub.channel)) {
        // MCP Events: 410 is non-retryable for that delivery and does not disable the endpoint.
        await removeRow();
        await trx.updateTable("delivery_subscriptions").set(failure).where("id", "=", sub.id).execute();
        return "dropped";
      }
      await trx.updateTable("delivery_subscriptions").set(failure).where("id", "=", sub.id).execute();
      await end(ctx, trx, sub.id, "gone", { notify: false });
      return "stopped";
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
      await giveUp("retries-exhausted");
      await trx.updateTable("delivery_subscriptions").set(failure).where("id", "=", sub.id).execute();
      if (followsMcpRules(sub.channel)) {
        // MCP Events: the event is given up (the watermark moves on) and delivery is suspended.
        await removeRow();
        await trx
          .updateTable("delivery_subscriptions")
          .set({ delivery_active: 0 })
          .where("id", "=", sub.id)
          .execute();
      } else {
        await end(ctx, trx, sub.id, "delivery-failed", { notify: true });
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
