import { MATCHES_EVENT } from "./coalesce.js";
import type { Db, EngineContext } from "./context.js";
import type { EnqueueItem } from "./enqueue.js";
import { DeliveryError } from "./errors.js";
import type { Channel } from "./schema.js";

/** What an enqueue needs to know of a subscription before it builds the event bodies. */
export interface Target {
  channel: Channel;
  status: string;
  subscriber_id: string;
  agg_new_matches: number;
  agg_latest_delivered_at: string | null;
}

/** Subscriptions per statement (their ids are bound as variables). */
export const MAX_SUBSCRIPTIONS_PER_STATEMENT = 500;
/** Subscriptions remembered per engine (PostgreSQL); the oldest is forgotten first. */
const REMEMBERED = 10_000;

type Known = Pick<Target, "channel" | "subscriber_id">;
type Remembered = Map<string, Known>;
const rememberedByEngine = new WeakMap<EngineContext, Remembered>();

/**
 * The targets of an enqueue, by id; throws when one does not exist.
 *
 * PostgreSQL does not read them when every one was seen before: a subscription's channel and
 * subscriber never change, and the append statement itself drops the rows of an ended
 * subscription and writes nothing when one is gone (postgres-enqueue.ts; the caller then calls
 * `forgetTargets` and throws). The read only cost a round trip, waited for while the caller's
 * transaction is open (issue 14). Matches reports still read: they add to the stored aggregate.
 */
export async function enqueueTargets(
  ctx: EngineContext,
  db: Db,
  ids: readonly string[],
  items: readonly EnqueueItem[],
): Promise<Map<string, Target>> {
  if (ctx.store.dialect !== "postgres") return readTargets(db, ids);
  const remembered = rememberedOf(ctx);
  const reads =
    ids.length > MAX_SUBSCRIPTIONS_PER_STATEMENT ||
    (ctx.coalesce && items.some((item) => item.event.type === MATCHES_EVENT)) ||
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

async function readTargets(db: Db, ids: readonly string[]): Promise<Map<string, Target>> {
  const targets = new Map<string, Target>();
  for (let first = 0; first < ids.length; first += MAX_SUBSCRIPTIONS_PER_STATEMENT) {
    const found = await db
      .selectFrom("delivery_subscriptions")
      .select(["id", "channel", "status", "subscriber_id", "agg_new_matches", "agg_latest_delivered_at"])
      .where("id", "in", ids.slice(first, first + MAX_SUBSCRIPTIONS_PER_STATEMENT))
      .execute();
    for (const row of found) targets.set(row.id, row);
  }
  if (targets.size !== ids.length) {
    throw new DeliveryError("ERR_DELIVERY_UNKNOWN_SUBSCRIPTION", "no such subscription");
  }
  return targets;
}

function rememberedOf(ctx: EngineContext): Remembered {
  let remembered = rememberedByEngine.get(ctx);
  if (!remembered) {
    remembered = new Map();
    rememberedByEngine.set(ctx, remembered);
  }
  return remembered;
}
