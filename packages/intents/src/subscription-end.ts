/**
 * The end request: how whoever receives a subscription's doorbells ends it without the intentCode
 * (Doorbell's addition to push profile 0.4; the profile has unsubscription by code and 410 only).
 * A forwarder needs it: when its agent's side ends without the agent, only the agent's code opens
 * the holder's (§7 rule 1), yet rule 6 wants the holder's side ended too.
 *
 * The request is signed like a doorbell, the other way round: Standard Webhooks headers over the
 * exact body, with the subscription's own `whsec_` secret, which only the holder and the receiver
 * know. So it proves what a 410 from the endpoint proves, that the receiver wants no more.
 *
 *   POST <the descriptor's push.endUrl>
 *   webhook-id, webhook-timestamp, webhook-signature (v1)
 *   {"type":"subscription.end","subscriptionId":"sub_…","reason":"gone"}
 */

export const SUBSCRIPTION_END_TYPE = "subscription.end";

/**
 * Why the receiver's side ended, in the words a holder already keeps for a subscription's end:
 * its endpoint is gone, it stopped answering, it failed a challenge, its lease ran out, or it
 * unsubscribed.
 */
export const SUBSCRIPTION_END_REASONS = [
  "gone",
  "delivery-failed",
  "verification-failed",
  "lease-expired",
  "unsubscribed",
] as const;
export type SubscriptionEndReason = (typeof SUBSCRIPTION_END_REASONS)[number];

/** The largest body a holder reads: the three fields take under 200 bytes. */
export const MAX_SUBSCRIPTION_END_BYTES = 1024;

/** A subscription id as a holder mints it: printable, no spaces, at most 64 characters. */
const SUBSCRIPTION_ID = /^[A-Za-z0-9_-]{1,64}$/;

export interface SubscriptionEnd {
  subscriptionId: string;
  reason: SubscriptionEndReason;
}

const isReason = (value: unknown): value is SubscriptionEndReason =>
  typeof value === "string" && (SUBSCRIPTION_END_REASONS as readonly string[]).includes(value);

/** The request as sent: exactly its three fields, in this order. */
export function subscriptionEndBody(end: SubscriptionEnd): string {
  return JSON.stringify({
    type: SUBSCRIPTION_END_TYPE,
    subscriptionId: end.subscriptionId,
    reason: end.reason,
  });
}

/** The request's fields, or why it is not one (in plain words, never echoing a value). */
export function readSubscriptionEnd(json: unknown): SubscriptionEnd | { problem: string } {
  if (typeof json !== "object" || json === null || Array.isArray(json))
    return { problem: "the body must be a JSON object" };
  const fields = Object.keys(json);
  const extra = fields.find((field) => !["type", "subscriptionId", "reason"].includes(field));
  if (extra !== undefined) return { problem: "the body may have only type, subscriptionId and reason" };
  const { type, subscriptionId, reason } = json as Record<string, unknown>;
  if (type !== SUBSCRIPTION_END_TYPE) return { problem: `type must be "${SUBSCRIPTION_END_TYPE}"` };
  if (typeof subscriptionId !== "string" || !SUBSCRIPTION_ID.test(subscriptionId))
    return { problem: "subscriptionId must be the subscription's id" };
  if (!isReason(reason)) return { problem: `reason must be one of ${SUBSCRIPTION_END_REASONS.join(", ")}` };
  return { subscriptionId, reason };
}
