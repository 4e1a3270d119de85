/**
 * intent.matches.delivered doorbells, inside the transaction that recorded the matches.
 *
 * Issue 14 item 4: each subscription keeps where its doorbells have counted to
 * (holder_push_announced); a doorbell counts the intent's matches after that place, read from the
 * database, and moves it. Every caller holds the arrivals lock (matching/reader.ts: an import
 * batch, a reply, or a catch-up after an activation), so these transactions run one at a time and
 * no match is counted twice, whichever process or path reaches it first; and no match is left out
 * by a path that did not see it (an index that was behind), since the next one counts it.
 */
import type { Kysely } from "@doorbell/store";
import { type MatchPosition, type ReadMatch, readMatches } from "../matching/reader.js";
import type { FoundMatches } from "../matching/service.js";
import type { HolderTables } from "../schema.js";
import { engineDb, type Push, type PushDb } from "./context.js";
import { checkedDoorbell } from "./doorbells.js";
import { MATCHES_EVENT } from "./rows.js";
import { eventsOf, iso } from "./views.js";

/** A live subscription with what counting its matches needs. */
interface Counted {
  id: string;
  intent_id: string;
  events_json: string;
  created_at: number;
  matching_since: number | null;
  since: number | null;
  at: number | null;
  seq: number | null;
}

/** Rings the live subscriptions of the intents in `found` (an import batch or a reply). */
export async function enqueueMatches(
  push: Push,
  db: Kysely<HolderTables>,
  found: FoundMatches,
): Promise<void> {
  if (found.count === 0) return;
  const trx = db as unknown as PushDb;
  const subs = await liveSubscriptionsOf(trx, found);
  const matched = new Set(found.byOffer.flatMap((offer) => offer.intentIds));
  const reads = new Map<string, Promise<ReadMatch[]>>();
  for (const sub of subs) if (matched.has(sub.intent_id)) await announce(push, trx, sub, reads);
}

/**
 * Rings the live subscriptions of one intent for its matches not counted yet (after it became
 * active or changed, here or in another process, or when an import ends). The caller holds the
 * arrivals lock. Returns how many matches the doorbells counted.
 */
export async function catchUpMatches(
  push: Push,
  db: Kysely<HolderTables>,
  intentId: string,
): Promise<number> {
  const trx = db as unknown as PushDb;
  let counted = 0;
  const reads = new Map<string, Promise<ReadMatch[]>>();
  for (const sub of await live(trx).where("p.intent_id", "=", intentId).execute())
    counted += await announce(push, trx, sub, reads);
  return counted;
}

/**
 * One doorbell for the matches after the subscription's place, which moves to the last of them.
 * `reads` shares one read among an intent's subscriptions at the same place (usually all of them).
 */
async function announce(
  push: Push,
  trx: PushDb,
  sub: Counted,
  reads: Map<string, Promise<ReadMatch[]>>,
): Promise<number> {
  if (sub.matching_since === null || !eventsOf(sub).includes(MATCHES_EVENT)) return 0;
  const since = Number(sub.matching_since);
  // Criteria that took effect since the last count re-deliver every match at matching_since: the
  // place no longer applies. Without one, what was delivered before the subscription is not rung.
  const after: MatchPosition =
    sub.since !== null && Number(sub.since) === since
      ? { at: Number(sub.at), id: Number(sub.seq) }
      : { at: Number(sub.created_at), id: 0 };
  const key = `${sub.intent_id} ${after.at} ${after.id}`;
  let read = reads.get(key);
  if (read === undefined) {
    read = readMatches(trx as unknown as Kysely<HolderTables>, sub.intent_id, after);
    reads.set(key, read);
  }
  const matches = await read;
  const last = matches.at(-1);
  if (last === undefined) return 0;
  const event = checkedDoorbell(MATCHES_EVENT, iso(push.ctx.clock()), {
    subscriptionId: sub.id,
    newMatches: matches.length,
    latestDeliveredAt: iso(last.deliveredAt),
  });
  await push.engine.enqueue(engineDb(trx), sub.id, event);
  const place = { since, at: last.position.at, seq: last.position.id };
  await trx
    .insertInto("holder_push_announced")
    .values({ subscription_id: sub.id, ...place })
    .onConflict((conflict) => conflict.column("subscription_id").doUpdateSet(place))
    .execute();
  return matches.length;
}

/** Above this many matches, one query for every live subscription beats lists of ids. */
const MANY_MATCHES = 2_000;

function live(db: PushDb) {
  return db
    .selectFrom("holder_push as p")
    .innerJoin("delivery_subscriptions as d", "d.id", "p.id")
    .innerJoin("holder_intents as i", "i.id", "p.intent_id")
    .leftJoin("holder_push_announced as a", "a.subscription_id", "p.id")
    .select([
      "p.id",
      "p.intent_id",
      "p.events_json",
      "p.created_at",
      "i.matching_since",
      "a.since",
      "a.at",
      "a.seq",
    ])
    .where("d.status", "!=", "ended");
}

/**
 * The live (not ended) push subscriptions that may belong to intents in `found`. A large import can
 * touch most active intents while few have subscriptions: then all live ones are read once.
 */
async function liveSubscriptionsOf(db: PushDb, found: FoundMatches): Promise<Counted[]> {
  // Every live one: the caller skips those of intents without matches.
  if (found.count > MANY_MATCHES) return live(db).execute();
  const intentIds = [...new Set(found.byOffer.flatMap((offer) => offer.intentIds))];
  const subs = [];
  for (let i = 0; i < intentIds.length; i += 500) {
    for (const sub of await live(db)
      .where("p.intent_id", "in", intentIds.slice(i, i + 500))
      .execute())
      subs.push(sub);
  }
  return subs;
}
