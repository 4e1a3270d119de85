import { postWebhook } from "@doorbell/webhooks";
import { deadLetter, logFailedAttempt } from "./attempt-log.js";
import { type AttemptSigner, attemptSigner, signAttempt, withoutCursor } from "./channels.js";
import { type EngineContext, endpointOf, secretAd } from "./context.js";
import { type AttemptOutcome, planFailure } from "./decide.js";
import { recordDelivered } from "./delivered.js";
import { recordEndpointFailure } from "./endpoint-state.js";
import { disablingFor, healthCounts } from "./health.js";
import type { HeadRow } from "./outbox/backend.js";
import type { SubscriptionRow } from "./schema.js";
import { endAttemptSpan, startAttemptSpan } from "./spans.js";
import { THROTTLE_STATUSES } from "./throttle.js";

export type { HeadRow };

import { end } from "./subscriptions.js";

export type { AttemptOutcome } from "./decide.js";

/**
 * The secrets to sign with: the current one, plus the previous one while a rotation overlaps and it
 * is another secret (a renewal with the same secret is no rotation: one signature, not the same twice).
 */
export function signingSecrets(ctx: EngineContext, sub: SubscriptionRow, now: number): string[] {
  const current = ctx.sealer.openText(sub.secret_sealed as string, secretAd(sub.id, "current"));
  const previous = sub.previous_secret_sealed
    ? ctx.sealer.openText(sub.previous_secret_sealed, secretAd(sub.id, "previous"))
    : null;
  return secretsInForce(current, previous, sub.previous_secret_until, now);
}

function secretsInForce(
  current: string,
  previous: string | null,
  previousUntil: number | null,
  now: number,
): string[] {
  const overlaps = previous !== null && previous !== current && previousUntil !== null && now < previousUntil;
  return overlaps ? [current, previous] : [current];
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
      const secrets = secretsInForce(current, previous, previousUntil, now);
      if (secrets.length > 1) {
        both ??= attemptSigner(sub.channel, sub.subscriber_id, secrets);
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

/** deliveryStatus as an attempt left it, for the claim's own copy of the subscription. */
export type AttemptStatus = Pick<
  SubscriptionRow,
  "last_error" | "failed_since" | "consecutive_failures" | "delivery_active"
>;

/** What one attempt did; after a failure, the deliveryStatus it wrote. */
export interface Attempted {
  outcome: AttemptOutcome;
  status?: AttemptStatus;
  /** A 429 or 503 that is retried: when its retry is due (throttle.ts). */
  throttledUntil?: number;
}

const DELIVERED: Attempted = { outcome: "delivered" };
const GONE: Attempted = { outcome: "gone" };

export interface AttemptOptions {
  /** Send the body without its cursor: an older event of the subscription is still pending. */
  withoutCursor?: boolean;
}

/**
 * Sends one row of a subscription's queue once and records the result. Success removes the row
 * (the worker writes deliveryStatus when it releases the subscription); a failure does what the
 * channel's policy decides (decide.ts): retry at a time, drop or give up the event (dead-lettered),
 * end the subscription, and on the MCP channels suspend delivery after sustained failures.
 * `keys`: the claim's opened endpoint and secrets (opened here when absent).
 */
export async function attemptRow(
  ctx: EngineContext,
  sub: SubscriptionRow,
  row: HeadRow,
  keys?: OpenedKeys,
  options?: AttemptOptions,
): Promise<Attempted> {
  const now = ctx.clock();
  const body = Buffer.from(options?.withoutCursor ? withoutCursor(row.body) : row.body, "utf8");
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
  const answered = ctx.outbox.sending(ctx);
  const span = startAttemptSpan(sub.channel, sub.id, row);
  let result: Awaited<ReturnType<typeof postWebhook>>;
  try {
    result = await postWebhook({ url, headers, body, policy: ctx.policy });
  } catch (error) {
    if (span !== undefined) endAttemptSpan(span, undefined, error);
    throw error;
  } finally {
    answered();
  }
  if (span !== undefined) endAttemptSpan(span, result);
  const kind = row.final === 1 ? "final" : "event";
  const outcome = result.ok ? "delivered" : result.category;
  const metrics = attemptMetrics(ctx, sub.channel, kind, outcome);
  metrics.attempts.inc();
  metrics.seconds.observe(result.durationMs / 1000);
  ctx.stats.record(sub.channel, result.ok, result.durationMs, now);
  const after = ctx.clock();
  const policy = ctx.channels[sub.channel];

  if (result.ok) {
    const recorded = await recordDelivered(ctx, {
      rowId: row.id,
      seq: row.seq,
      subscriptionId: sub.id,
      at: after,
      matches: row.type === ctx.coalesced?.event,
      remove: policy.order === "each",
    });
    return recorded ? DELIVERED : GONE;
  }
  const plan = planFailure(policy, {
    row,
    answer: result,
    sentAt: now,
    now: after,
    random: ctx.random,
    before: { failedSince: sub.failed_since, failures: sub.consecutive_failures },
  });
  const { decision } = plan;
  // Failing every attempt for too long disables the endpoint (health.ts).
  const disabling = disablingFor(sub.channel, sub, decision, after, ctx.endpointDisableAfterMs);
  const suspends = decision.suspend || disabling?.kind === "suspend";
  const status: AttemptStatus = {
    last_error: result.category,
    failed_since: decision.streak.failedSince,
    consecutive_failures: decision.streak.failures,
    delivery_active: suspends ? 0 : sub.delivery_active,
  };
  await ctx.store.transaction(async (trx) => {
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
    const reason = plan.deadLetter;
    if (reason !== null) {
      await deadLetter(trx, {
        subscriptionId: sub.id,
        row,
        attempts: row.attempts + 1,
        category: result.category,
        reason,
        at: after,
      });
    }
    if (decision.kind === "retry" && plan.row === "retry") {
      await trx
        .updateTable("delivery_outbox")
        .set({
          attempts: decision.attempts,
          first_attempt_at: decision.firstAttemptAt,
          next_attempt_at: decision.at,
        })
        .where("id", "=", row.id)
        .execute();
    } else if (plan.row === "delete") {
      await trx.deleteFrom("delivery_outbox").where("id", "=", row.id).execute();
    }
    await trx
      .updateTable("delivery_subscriptions")
      .set({
        last_error: status.last_error,
        failed_since: status.failed_since,
        consecutive_failures: status.consecutive_failures,
        updated_at: after,
        last_failure_at: after,
        ...healthCounts(after, { successes: 0, failures: 1 }),
        ...(suspends ? { delivery_active: 0 } : {}),
      })
      .where("id", "=", sub.id)
      .execute();
    if (decision.suspend) {
      ctx.log.warn(
        { subscription: sub.id, failures: status.consecutive_failures, failedSince: status.failed_since },
        "delivery suspended after sustained failures until the next refresh",
      );
    }
    // 410 ends without subscription.ended (the endpoint is gone); exhausted retries announce it.
    if (decision.kind === "end") {
      await end(ctx, trx, sub.id, decision.reason, { notify: decision.reason === "delivery-failed" });
    }
    await recordEndpointFailure(ctx, trx, {
      sub,
      row,
      plan,
      disabling,
      category: result.category,
      at: after,
    });
  });
  const throttled =
    decision.kind === "retry" && result.status !== undefined && THROTTLE_STATUSES.has(result.status);
  const next = disabling ? "stopped" : plan.outcome;
  return { outcome: next, status, ...(throttled ? { throttledUntil: decision.at } : {}) };
}
