/**
 * The push profile's matches doorbell (§5.2, §6 rule 6) as the delivery engine coalesces it: each
 * enqueued event reports a count and the latest delivery time, the engine adds them up while the
 * window is closed, and this builds the one doorbell sent for them, checked against the published
 * schema before it is signed. The engine asks it which subscriptions may carry one at all (rules 3
 * and 9). The only place its body is built: enqueue-matches.ts builds each event with it too, which
 * is the doorbell sent as it is where the engine does not coalesce (a bench's engine with
 * `coalescing: "off"`).
 */
import type { CoalescedEvent, CoalescedState } from "@doorbell/delivery";
import { checkedDoorbell } from "@doorbell/intents";
import { asTables } from "@doorbell/store";
import type { PushDbTables } from "./context.js";
import { mayHearMatches } from "./match-listeners.js";
import { MATCHES_EVENT } from "./rows.js";

export const coalescedMatchesDoorbell: CoalescedEvent = {
  event: MATCHES_EVENT,
  count: "newMatches",
  latest: "latestDeliveredAt",
  body: (state) => matchesDoorbell(state).data,
  // Rules 3 and 9: only a real subscription the person allowed hears of matches, however it was queued.
  carriers: (db, ids) => mayHearMatches(asTables<PushDbTables>(db), ids),
};

/** The matches doorbell for `count` matches up to `latest`, checked against the schema. */
export function matchesDoorbell(state: CoalescedState): {
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
} {
  return checkedDoorbell(MATCHES_EVENT, state.timestamp, {
    subscriptionId: state.subscriberId,
    newMatches: state.count,
    latestDeliveredAt: state.latest,
  });
}
