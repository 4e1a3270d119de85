/**
 * Push profile §7 rule 6 when the agent's side ends without the agent: its endpoint answered 410,
 * retries ran out, the lease or a renewal's challenge failed. The delivery engine ends it in its
 * worker, with no hook, so a short sweep marks each such relay ended at once; that makes the
 * holder's end request due (holder-ends.ts sends it: the forwarder cannot call the holder's
 * intent_unsubscribe_events, since only the agent's code opens the holder's, rule 1). From then
 * on the relay endpoint answers the holder's doorbells 410, the way left when the holder does not
 * take end requests. The sweep also lets ended relays be purged a day later.
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
        "relays whose agent side ended are ended; the holder is told",
      );
    }
    return ended;
  };
}
