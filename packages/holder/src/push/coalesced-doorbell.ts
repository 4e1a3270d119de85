/**
 * The push profile's matches doorbell (§5.2, §6 rule 6) as the delivery engine coalesces it: each
 * enqueued event reports a count and the latest delivery time, the engine adds them up while the
 * window is closed, and this builds the one doorbell sent for them, checked against the published
 * schema before it is signed. The only place its body is built.
 */
import type { CoalescedEvent } from "@doorbell/delivery";
import { checkedDoorbell } from "./doorbells.js";
import { MATCHES_EVENT } from "./rows.js";

/** What one matches event reports to the engine (enqueue-matches.ts queues it). */
export function matchesReport(newMatches: number, latestDeliveredAt: string): Record<string, unknown> {
  return { newMatches, latestDeliveredAt };
}

export const coalescedMatchesDoorbell: CoalescedEvent = {
  event: MATCHES_EVENT,
  count: "newMatches",
  latest: "latestDeliveredAt",
  body: (state) =>
    checkedDoorbell(MATCHES_EVENT, state.timestamp, {
      subscriptionId: state.subscriberId,
      newMatches: state.count,
      latestDeliveredAt: state.latest,
    }).data,
};
