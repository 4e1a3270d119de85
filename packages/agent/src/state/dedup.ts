/**
 * Push profile §6 rule 4 across restarts: the receiver's DedupStore with processed webhook-ids
 * kept in the agent state, so a doorbell replayed after a restart (within its 10 minutes) is
 * answered as a duplicate instead of being processed again. Claims in progress stay in memory:
 * a crash while handling must let the holder's retry through.
 */
import type { ClaimResult, DedupStore } from "@doorbell/webhooks";
import type { StateBox } from "./box.js";

/** Far more than rule 6 lets a holder send in 10 minutes; a full store answers "busy" instead of forgetting. */
export const MAX_SEEN_IDS = 100_000;

export function createPersistentDedup(box: StateBox): DedupStore {
  const claims = new Map<string, number>();
  return {
    async claim(key, now, leaseMs): Promise<ClaimResult> {
      const processedUntil = box.state.seen[key];
      if (processedUntil !== undefined && processedUntil > now) return "processed";
      const claimedUntil = claims.get(key);
      if (claimedUntil !== undefined && claimedUntil > now) return "processing";
      sweep(box, now);
      claims.set(key, now + leaseMs);
      return "claimed";
    },
    async complete(key, now, windowMs) {
      claims.delete(key);
      box.state.seen[key] = now + windowMs;
      await box.commit();
    },
    async release(key) {
      claims.delete(key);
    },
  };
}

function sweep(box: StateBox, now: number): void {
  const seen = box.state.seen;
  for (const [key, until] of Object.entries(seen)) if (until <= now) delete seen[key];
  if (Object.keys(seen).length >= MAX_SEEN_IDS) {
    // The receiver answers 500 and the holder retries later, when older ids have expired.
    throw new Error("too many webhook-ids in the replay window");
  }
}
