import type { EngineContext } from "./context.js";

/** Answers that ask the sender to slow down as a whole, not to drop one event. */
export const THROTTLE_STATUSES: ReadonlySet<number> = new Set([429, 503]);

/**
 * Channels that retry each event on its own: after a 429 or 503, the subscription's other events
 * wait until the refused one's retry (which honours Retry-After, retry.ts), instead of being sent
 * at once to an endpoint that just asked for a pause. Their attempt counts do not change.
 */
export async function holdDueRows(
  ctx: Pick<EngineContext, "store">,
  subscriptionId: string,
  until: number,
): Promise<void> {
  await ctx.store.db
    .updateTable("delivery_outbox")
    .set({ next_attempt_at: until })
    .where("subscription_id", "=", subscriptionId)
    .where("next_attempt_at", "<", until)
    .execute();
}
