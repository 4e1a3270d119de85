/**
 * Push profile §7 rule 6: "a forwarder ends its subscription towards the holder when the agent's
 * ends" — at once, not on the holder's next doorbell. The agent's side ends inside the delivery
 * engine without the agent (its endpoint answered 410, retries ran out, the lease or a renewal's
 * challenge failed), so a short sweep finds live relays whose agent subscription has ended, ends
 * each relay (once, across processes) and calls the holder's intent_unsubscribe_events with the
 * holder's code kept sealed in the relay. Unsubscribe and withdraw end both sides themselves.
 * When the holder cannot be told, its next doorbell gets 410 (§6 rule 5), as before.
 */
import type { ForwarderContext } from "./context.js";
import { relaysEndedByAgent, takeEndedRelay } from "./relays.js";

type Ctx = Pick<ForwarderContext, "store" | "sealer" | "hashers" | "clock" | "upstream" | "log">;

/**
 * Ends a live relay whose agent side has ended and tells the holder (once, whoever calls first).
 * True when the holder ended its subscription on our word.
 */
export async function endHolderSide(ctx: Ctx, id: string, reason: string): Promise<boolean> {
  const taken = await takeEndedRelay(ctx, id, reason);
  if (taken?.holderCode == null || taken.holderSubscriptionId === null) return false;
  try {
    const result = await ctx.upstream.call("intent_unsubscribe_events", {
      intentCode: taken.holderCode,
      subscriptionId: taken.holderSubscriptionId,
    });
    // A refusal (the holder already ended and deleted it, the intent is gone) leaves nothing to end.
    if (result.isError === true) return false;
  } catch (error) {
    ctx.log.warn(
      {
        event: "forwarder.unsubscribe_upstream_failed",
        error: error instanceof Error ? error.name : typeof error,
      },
      "the holder could not be told; its next doorbell gets 410",
    );
    return false;
  }
  ctx.log.info(
    { event: "forwarder.holder_side_ended", reason },
    "the agent's subscription ended; so did the holder's",
  );
  return true;
}

export type EndingSweep = () => Promise<number>;

/** One pass; resolves with how many holder subscriptions it ended. */
export function createEndingSweep(ctx: Ctx): EndingSweep {
  return async () => {
    let ended = 0;
    for (const { id, reason } of await relaysEndedByAgent(ctx)) {
      if (await endHolderSide(ctx, id, reason)) ended++;
    }
    return ended;
  };
}
