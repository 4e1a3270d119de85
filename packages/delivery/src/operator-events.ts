/**
 * Operational events for the operator (like Svix's `endpoint.disabled` and
 * `message.attempt.exhausted`): `endpoint.disabled`, `endpoint.recovered` and `delivery.exhausted`,
 * POSTed to the operator's webhook, signed with Standard Webhooks. They travel through the engine's
 * own outbox as the one subscription of the `operator` channel, so they are durable (queued in the
 * transaction that records what they report), retried on the Standard Webhooks schedule, dead-lettered
 * when that runs out, and sent through the same SSRF-safe egress as every doorbell.
 *
 * A body names the subscription by its ids and says what happened and when: never its endpoint,
 * its secret, a doorbell's body or anything about the person.
 */
import { checkUrl, decodeSecret, generateSecret } from "@doorbell/webhooks";
import { type Db, type EngineContext, secretAd } from "./context.js";
import { DeliveryError } from "./errors.js";
import { randomId } from "./ids.js";
import type { Channel, SubscriptionRow } from "./schema.js";
import { FRESH_DELIVERY_STATE, notifyWorkers } from "./subscriptions.js";

/** The operator webhook's subscription: one per database, whichever process configured it last. */
export const OPERATOR_SUBSCRIPTION_ID = "sub_operator_webhook";

/** Its lease never runs out: it lives as long as the operator configures it. */
const NEVER = 253_402_300_799_000; // 9999-12-31T23:59:59Z

export const OPERATOR_EVENT_TYPES = [
  "endpoint.disabled",
  "endpoint.recovered",
  "delivery.exhausted",
] as const;
export type OperatorEventType = (typeof OPERATOR_EVENT_TYPES)[number];

/** Who the event is about: ids and the channel only. */
export interface EndpointRef {
  subscriptionId: string;
  subscriberId: string;
  channel: Channel;
}

export type OperatorEventData =
  | {
      type: "endpoint.disabled";
      endpoint: EndpointRef;
      reason: string;
      category: string | null;
      failingSince: number | null;
      lastSuccessAt: number | null;
      at: number;
    }
  | { type: "endpoint.recovered"; endpoint: EndpointRef; disabledAt: number; at: number }
  | {
      type: "delivery.exhausted";
      endpoint: EndpointRef;
      webhookId: string;
      eventType: string;
      attempts: number;
      category: string;
      firstAttemptAt: number | null;
      at: number;
    };

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(Number(ms)).toISOString());

/** The Standard Webhooks body `{type, timestamp, data}` of an event. */
export function operatorEventBody(event: OperatorEventData): string {
  const { endpoint } = event;
  const about = {
    subscriptionId: endpoint.subscriptionId,
    subscriberId: endpoint.subscriberId,
    channel: endpoint.channel,
  };
  let data: Record<string, unknown>;
  switch (event.type) {
    case "endpoint.disabled":
      data = {
        ...about,
        reason: event.reason,
        category: event.category,
        failingSince: iso(event.failingSince),
        lastSuccessAt: iso(event.lastSuccessAt),
        disabledAt: iso(event.at),
      };
      break;
    case "endpoint.recovered":
      data = { ...about, disabledAt: iso(event.disabledAt), recoveredAt: iso(event.at) };
      break;
    case "delivery.exhausted":
      data = {
        ...about,
        webhookId: event.webhookId,
        eventType: event.eventType,
        attempts: event.attempts,
        category: event.category,
        firstAttemptAt: iso(event.firstAttemptAt),
        lastAttemptAt: iso(event.at),
      };
      break;
  }
  return JSON.stringify({ type: event.type, timestamp: iso(event.at), data });
}

export function endpointRef(sub: Pick<SubscriptionRow, "id" | "subscriber_id" | "channel">): EndpointRef {
  return { subscriptionId: sub.id, subscriberId: sub.subscriber_id, channel: sub.channel };
}

/**
 * Queues the event for the operator's webhook in the caller's transaction, and counts it in
 * /metrics whether or not a webhook is configured. Nothing is queued without one.
 */
export async function emitOperatorEvent(ctx: EngineContext, db: Db, event: OperatorEventData): Promise<void> {
  ctx.metrics.operatorEvents.inc({ type: event.type });
  const now = ctx.clock();
  // The sequence is taken under the row lock, and only while the webhook is configured.
  const taken = await db
    .updateTable("delivery_subscriptions")
    .set((eb) => ({ next_seq: eb("next_seq", "+", 1), wake_at: now, updated_at: now }))
    .where("id", "=", OPERATOR_SUBSCRIPTION_ID)
    .where("status", "=", "active")
    .returning((eb) => eb("next_seq", "-", 1).as("seq"))
    .executeTakeFirst();
  if (taken === undefined) return;
  await db
    .insertInto("delivery_outbox")
    .values({
      subscription_id: OPERATOR_SUBSCRIPTION_ID,
      seq: Number(taken.seq),
      webhook_id: randomId("msg_"),
      type: event.type,
      body: operatorEventBody(event),
      attempts: 0,
      first_attempt_at: null,
      next_attempt_at: now,
      final: 0,
      created_at: now,
    })
    .execute();
  await notifyWorkers(ctx, db);
}

export interface OperatorWebhook {
  url: string;
  /**
   * A `whsec_` secret the receiver verifies with. Without one, the secret already stored for the
   * operator's webhook is kept, or a new one is generated (`ConfiguredOperatorWebhook.generated`).
   */
  secret?: string;
}

export interface ConfiguredOperatorWebhook {
  /** The secret in force (the caller shows or stores it when it was generated). */
  secret: string;
  /** Generated now: nobody knows it yet. */
  generated: boolean;
}

/**
 * Points the operator's events at `webhook` (a new endpoint or secret replaces the old at once),
 * or, with undefined, stops queueing them: the subscription ends and what was queued is dropped.
 */
export async function configureOperatorWebhook(
  ctx: EngineContext,
  webhook: OperatorWebhook | undefined,
): Promise<ConfiguredOperatorWebhook | undefined> {
  const now = ctx.clock();
  if (webhook === undefined) {
    await ctx.store.db
      .updateTable("delivery_subscriptions")
      .set({ status: "ended", ended_reason: "unconfigured", ended_at: now, updated_at: now, wake_at: now })
      .where("id", "=", OPERATOR_SUBSCRIPTION_ID)
      .where("status", "!=", "ended")
      .execute();
    await ctx.store.db
      .deleteFrom("delivery_outbox")
      .where("subscription_id", "=", OPERATOR_SUBSCRIPTION_ID)
      .execute();
    return undefined;
  }
  const verdict = checkUrl(webhook.url, ctx.policy);
  if (!verdict.ok) {
    throw new DeliveryError(
      "ERR_DELIVERY_CONFIG",
      `the operator webhook's URL is refused: ${verdict.reason}`,
    );
  }
  const id = OPERATOR_SUBSCRIPTION_ID;
  const chosen = webhook.secret === undefined ? undefined : { secret: webhook.secret, generated: false };
  const configured = chosen ?? (await storedSecret(ctx)) ?? { secret: generateSecret(), generated: true };
  try {
    decodeSecret(configured.secret);
  } catch {
    throw new DeliveryError("ERR_DELIVERY_CONFIG", "the operator webhook's secret must be whsec_ and base64");
  }
  const sealed = {
    url_sealed: ctx.sealer.seal(webhook.url, secretAd(id, "url")),
    secret_sealed: ctx.sealer.seal(configured.secret, secretAd(id, "current")),
    previous_secret_sealed: null,
    previous_secret_until: null,
    pending_secret_sealed: null,
    status: "active" as const,
    ended_reason: null,
    ended_at: null,
    purge_at: null,
    delivery_active: 1,
    updated_at: now,
    wake_at: now,
  };
  await ctx.store.transaction(async (trx) => {
    const updated = await trx
      .updateTable("delivery_subscriptions")
      .set(sealed)
      .where("id", "=", id)
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) > 0) return;
    await trx
      .insertInto("delivery_subscriptions")
      .values({
        ...sealed,
        id,
        channel: "operator",
        subscriber_id: id,
        verified: 1,
        approved: 1,
        verify_attempts: 0,
        verify_due_at: null,
        expires_at: NEVER,
        refresh_before: NEVER,
        ...FRESH_DELIVERY_STATE,
        created_at: now,
      })
      // Another process configuring it at the same moment inserted it first: theirs stands.
      .onConflict((oc) => oc.column("id").doNothing())
      .execute();
  });
  ctx.wake();
  return configured;
}

/** The secret an earlier configuration stored, kept when none is given now. */
async function storedSecret(ctx: EngineContext): Promise<ConfiguredOperatorWebhook | undefined> {
  const row = await ctx.store.db
    .selectFrom("delivery_subscriptions")
    .select("secret_sealed")
    .where("id", "=", OPERATOR_SUBSCRIPTION_ID)
    .executeTakeFirst();
  if (row?.secret_sealed === null || row?.secret_sealed === undefined) return undefined;
  const secret = ctx.sealer.openText(row.secret_sealed, secretAd(OPERATOR_SUBSCRIPTION_ID, "current"));
  return { secret, generated: false };
}
