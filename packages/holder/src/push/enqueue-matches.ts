/** One intent.matches.delivered doorbell per live subscription, inside the transaction that recorded the matches. */
import type { Kysely } from "@doorbell/store";
import { countFor, type FoundMatches } from "../matching/service.js";
import type { HolderTables } from "../schema.js";
import { engineDb, type Push, type PushDb } from "./context.js";
import { checkedDoorbell } from "./doorbells.js";
import { MATCHES_EVENT } from "./rows.js";
import { eventsOf, iso } from "./views.js";

export async function enqueueMatches(
  push: Push,
  db: Kysely<HolderTables>,
  found: FoundMatches,
): Promise<void> {
  if (found.count === 0) return;
  const trx = db as unknown as PushDb;
  const subs = await liveSubscriptionsOf(trx, found);
  const wanting = subs.filter((sub) => eventsOf(sub).includes(MATCHES_EVENT));
  if (wanting.length === 0) return;
  const counts = countFor(found, new Map(wanting.map((sub) => [sub.intent_id, sub])));
  for (const sub of wanting) {
    if (!counts.has(sub.intent_id)) continue; // a live subscription of an intent not in `found`
    const event = checkedDoorbell(MATCHES_EVENT, iso(push.ctx.clock()), {
      subscriptionId: sub.id,
      newMatches: counts.get(sub.intent_id) as number,
      latestDeliveredAt: iso(found.deliveredAt),
    });
    await push.engine.enqueue(engineDb(trx), sub.id, event);
  }
}

/** Above this many matches, one query for every live subscription beats lists of ids. */
const MANY_MATCHES = 2_000;

/**
 * The live (not ended) push subscriptions that may belong to intents in `found`. A large import can
 * touch most active intents while few have subscriptions: then all live ones are read once.
 */
async function liveSubscriptionsOf(
  db: PushDb,
  found: FoundMatches,
): Promise<{ id: string; intent_id: string; events_json: string }[]> {
  const live = () =>
    db
      .selectFrom("holder_push as p")
      .innerJoin("delivery_subscriptions as d", "d.id", "p.id")
      .select(["p.id", "p.intent_id", "p.events_json"])
      .where("d.status", "!=", "ended");
  // Every live one: the caller counts the matches of each and skips those with none.
  if (found.count > MANY_MATCHES) return live().execute();
  const intentIds = [...new Set(found.byOffer.flatMap((offer) => offer.intentIds))];
  const subs = [];
  for (let i = 0; i < intentIds.length; i += 500) {
    for (const sub of await live()
      .where("p.intent_id", "in", intentIds.slice(i, i + 500))
      .execute())
      subs.push(sub);
  }
  return subs;
}
