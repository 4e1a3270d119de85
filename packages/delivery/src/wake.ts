import { matchesOpenAt } from "./coalesce.js";
import type { EngineContext } from "./context.js";
import type { SubscriptionRow } from "./schema.js";
import { needsChallenge } from "./verification.js";

/**
 * When a worker should next look at a subscription it releases: its expiry, a due challenge, the
 * head of its queue, or the opening of the matches window; null when nothing is due.
 */
export function nextWake(
  ctx: EngineContext,
  sub: SubscriptionRow,
  head: { next_attempt_at: number; final: number } | undefined,
  matchesQueued: boolean,
): number | null {
  const times: number[] = [];
  if (sub.status === "ended") {
    if (head?.final === 1) times.push(head.next_attempt_at);
    if (sub.purge_at !== null) times.push(sub.purge_at);
  } else {
    times.push(sub.expires_at);
    if (needsChallenge(sub) && sub.verify_due_at !== null) times.push(sub.verify_due_at);
    if (sub.status === "active" && sub.delivery_active === 1) {
      if (head) times.push(head.next_attempt_at);
      if (sub.agg_new_matches > 0 && !matchesQueued) times.push(matchesOpenAt(ctx.limits, sub));
    }
  }
  return times.length === 0 ? null : Math.min(...times);
}
