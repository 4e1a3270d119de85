/**
 * Push profile §7 rule 6 when the agent's side ends without the agent: its endpoint answered 410,
 * retries ran out, the lease or a renewal's challenge failed. The forwarder cannot call the
 * holder's intent_unsubscribe_events then — only the agent's code opens the holder's (rule 1) — so
 * a short sweep marks each such relay ended at once. The relay endpoint then answers the holder's
 * next doorbell with 410 and the holder ends its side (§6 rule 5); a lease ends on both sides at
 * the same moment anyway, since the agent's lease is the holder's (subscriptions.ts `settle`).
 * The sweep also lets ended relays be purged a day later even when no doorbell comes.
 * Unsubscribe, withdraw and a new subscribe (the agent present) tell the holder themselves.
 */
import type { ForwarderContext } from "./context.js";
import { endRelay, relaysEndedByAgent } from "./relays.js";

export type EndingSweep = () => Promise<number>;

/** One pass; resolves with how many relays it ended. */
export function createEndingSweep(ctx: Pick<ForwarderContext, "store" | "clock" | "log">): EndingSweep {
  return async () => {
    let ended = 0;
    for (const { id, reason } of await relaysEndedByAgent(ctx)) {
      // Idempotent: another process's sweep or the relay endpoint may have ended it first.
      if (await endRelay(ctx.store.db, id, reason, ctx.clock())) ended++;
    }
    if (ended > 0) {
      ctx.log.info(
        { event: "forwarder.relays_ended", count: ended },
        "relays whose agent side ended now answer the holder 410",
      );
    }
    return ended;
  };
}
