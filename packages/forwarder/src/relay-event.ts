/**
 * Push profile §7 rule 4: a holder's doorbell is relayed only if `data` has exactly the fields of
 * its event type (§5.2, the shapes of schemas/push-notification-0.4.schema.json). Anything more —
 * or anything the type does not allow — is refused, so nothing the holder might have added can
 * reach the agent through us. The challenge (`subscription.verification`) is answered by the
 * receiver before this runs.
 */
import { notificationProblem } from "@doorbell/intents";

export type RelayedEvent =
  | {
      type: "intent.matches.delivered";
      timestamp: string;
      subscriptionId: string;
      newMatches: number;
      latestDeliveredAt: string;
    }
  | { type: "intent.status.changed"; timestamp: string; subscriptionId: string; status: string }
  | { type: "subscription.ended"; timestamp: string; subscriptionId: string; reason: string };

/** The event, or why it is refused (names fields, never values): the holder's published schema decides. */
export function readRelayedEvent(body: unknown): RelayedEvent | { problem: string } {
  const problem = notificationProblem(body);
  if (problem !== undefined) return { problem };
  const { type, timestamp, data } = body as {
    type: string;
    timestamp: string;
    data: Record<string, unknown>;
  };
  if (type === "subscription.verification") return { problem: "a challenge is answered here, never relayed" };
  return { type, timestamp, ...data } as RelayedEvent;
}

/** The agent's `data`: the holder's fields in their order, with the forwarder's subscriptionId. */
export function agentData(event: RelayedEvent, subscriptionId: string): Record<string, unknown> {
  switch (event.type) {
    case "intent.matches.delivered":
      return { subscriptionId, newMatches: event.newMatches, latestDeliveredAt: event.latestDeliveredAt };
    case "intent.status.changed":
      return { subscriptionId, status: event.status };
    default:
      return { subscriptionId, reason: event.reason };
  }
}
