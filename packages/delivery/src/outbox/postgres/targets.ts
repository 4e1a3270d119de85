import type { Db, EngineContext } from "../../context.js";
import type { EnqueueItem } from "../../events.js";
import { MAX_SUBSCRIPTIONS_PER_STATEMENT, readTargets, type Target } from "../../targets.js";

/** Subscriptions remembered per engine; the oldest is forgotten first. */
const REMEMBERED = 10_000;

type Known = Pick<Target, "channel" | "subscriber_id">;
type Remembered = Map<string, Known>;
const rememberedByEngine = new WeakMap<EngineContext, Remembered>();

/**
 * The targets of an enqueue, by id; throws when one does not exist.
 *
 * Not read when every one was seen before: a subscription's channel and subscriber never change,
 * and the append statement itself drops the rows of an ended subscription and writes nothing
 * when one is gone (append.ts; it then calls `forgetTargets` and throws). The read only cost a round trip, waited for while the caller's
 * transaction is open. Coalesced events still read: they add to the stored aggregate.
 */
export async function rememberedTargets(
  ctx: EngineContext,
  db: Db,
  ids: readonly string[],
  items: readonly EnqueueItem[],
): Promise<Map<string, Target>> {
  const remembered = rememberedOf(ctx);
  const reads =
    ids.length > MAX_SUBSCRIPTIONS_PER_STATEMENT ||
    (ctx.coalesced !== undefined && items.some((item) => item.event.type === ctx.coalesced?.event)) ||
    ids.some((id) => !remembered.has(id));
  if (!reads) {
    const targets = new Map<string, Target>();
    for (const id of ids) {
      const { channel, subscriber_id } = remembered.get(id) as Known;
      // The status is the append statement's to judge; the aggregate is read by matches reports only.
      targets.set(id, {
        channel,
        subscriber_id,
        status: "active",
        agg_new_matches: 0,
        agg_latest_delivered_at: null,
      });
    }
    return targets;
  }
  const targets = await readTargets(db, ids);
  for (const [id, { channel, subscriber_id }] of targets) {
    if (!remembered.has(id) && remembered.size >= REMEMBERED) {
      remembered.delete(remembered.keys().next().value as string);
    }
    remembered.set(id, { channel, subscriber_id });
  }
  return targets;
}

/** Forgets subscriptions an append found gone. */
export function forgetTargets(ctx: EngineContext, ids: readonly string[]): void {
  const remembered = rememberedOf(ctx);
  for (const id of ids) remembered.delete(id);
}

function rememberedOf(ctx: EngineContext): Remembered {
  let remembered = rememberedByEngine.get(ctx);
  if (!remembered) {
    remembered = new Map();
    rememberedByEngine.set(ctx, remembered);
  }
  return remembered;
}
