import type { EngineContext } from "./context.js";

/**
 * Gives a claimed subscription back untouched, due again at `at`: no attempt was made, so nothing
 * of its queue, retries or deliveryStatus changes. Used when its host is at its cap (host-gate.ts).
 * An enqueue meanwhile may have made it due sooner; it then waits until `at`, no longer.
 */
export async function putBack(
  ctx: Pick<EngineContext, "store">,
  id: string,
  workerId: string,
  at: number,
): Promise<void> {
  await ctx.store.db
    .updateTable("delivery_subscriptions")
    .set({ wake_at: at, lease_owner: null, lease_until: null })
    .where("id", "=", id)
    .where("lease_owner", "=", workerId)
    .execute();
}
