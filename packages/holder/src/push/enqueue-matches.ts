/**
 * intent.matches.delivered doorbells, inside the transaction that recorded the matches.
 *
 * Each subscription keeps where its doorbells have counted to
 * (holder_push_announced); a doorbell counts the intent's matches after that place, read from the
 * database, and moves it. Every caller holds the arrivals lock (matching/reader.ts: an import
 * batch, a reply, or a catch-up after an activation), so these transactions run one at a time and
 * no match is counted twice, whichever process or path reaches it first; and no match is left out
 * by a path that did not see it (an index that was behind), since the next one counts it.
 */
import { type EnqueueItem, liveSubscription } from "@doorbell/delivery";
import { asTables, type Kysely } from "@doorbell/store";
import { type MatchPosition, type ReadMatch, readMatches } from "../matching/reader.js";
import type { FoundMatches } from "../matching/service.js";
import type { HolderTables } from "../model/tables.js";
import { matchesDoorbell } from "./coalesced-doorbell.js";
import { engineDb, type Push, type PushDb, type PushDbTables } from "./context.js";
import { matchListeners } from "./match-listeners.js";
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
  const trx = asTables<PushDbTables>(db);
  const subs = await liveSubscriptionsOf(trx, found);
  const matched = new Set(found.intents);
  await announceAll(
    push,
    trx,
    subs.filter((sub) => matched.has(sub.intent_id)),
  );
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
  const trx = asTables<PushDbTables>(db);
  return announceAll(push, trx, await live(trx).where("p.intent_id", "=", intentId).execute());
}

/**
 * Rings one subscription for its intent's matches not counted yet: the person has just allowed
 * it, and what arrived while it waited is rung now. The caller holds the arrivals lock.
 */
export async function catchUpSubscription(push: Push, db: PushDb, subscriptionId: string): Promise<number> {
  return announceAll(push, db, await live(db).where("p.id", "=", subscriptionId).execute());
}

/** One doorbell to write, and the place its subscription moves to. */
interface Announcement {
  readonly item: EnqueueItem;
  readonly place: { subscription_id: string; since: number; at: number; seq: number };
  readonly counted: number;
}

/**
 * One doorbell per subscription for the matches after its place, written together: the events in
 * one `enqueueMany` and the new places in one upsert, so an import batch that matched hundreds of
 * subscribed intents costs a read per intent and a few statements, not five per subscription.
 * Returns how many matches the doorbells counted.
 */
async function announceAll(push: Push, trx: PushDb, subs: readonly Counted[]): Promise<number> {
  const reads = new Map<string, Promise<ReadMatch[]>>();
  const announced: Announcement[] = [];
  for (const sub of subs) {
    const one = await announcement(push, trx, sub, reads);
    if (one !== undefined) announced.push(one);
  }
  if (announced.length === 0) return 0;
  await push.engine.enqueueMany(
    engineDb(trx),
    announced.map((one) => one.item),
  );
  for (let i = 0; i < announced.length; i += PLACES_PER_STATEMENT) {
    await trx
      .insertInto("holder_push_announced")
      .values(announced.slice(i, i + PLACES_PER_STATEMENT).map((one) => one.place))
      .onConflict((conflict) =>
        conflict.column("subscription_id").doUpdateSet((eb) => ({
          since: eb.ref("excluded.since"),
          at: eb.ref("excluded.at"),
          seq: eb.ref("excluded.seq"),
        })),
      )
      .execute();
  }
  return announced.reduce((sum, one) => sum + one.counted, 0);
}

/** Rows per upsert of places: four values a row stays far below SQLite's variable limit. */
const PLACES_PER_STATEMENT = 1_000;

/**
 * The doorbell for the matches after the subscription's place, and the place it moves to (the last
 * of them), or undefined when there are none. `reads` shares one read among an intent's
 * subscriptions at the same place (usually all of them).
 */
async function announcement(
  push: Push,
  trx: PushDb,
  sub: Counted,
  reads: Map<string, Promise<ReadMatch[]>>,
): Promise<Announcement | undefined> {
  if (sub.matching_since === null || !eventsOf(sub).includes(MATCHES_EVENT)) return undefined;
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
    read = readMatches(asTables<HolderTables>(trx), sub.intent_id, after);
    reads.set(key, read);
  }
  const matches = await read;
  const last = matches.at(-1);
  if (last === undefined) return undefined;
  // The engine adds its count and time to the subscription's waiting doorbell.
  const event = matchesDoorbell({
    subscriberId: sub.id,
    count: matches.length,
    latest: iso(last.deliveredAt),
    timestamp: iso(push.ctx.clock()),
  });
  return {
    item: { subscriptionId: sub.id, event },
    place: { subscription_id: sub.id, since, at: last.position.at, seq: last.position.id },
    counted: matches.length,
  };
}

/** Above this many matches, one query for every live subscription beats lists of ids. */
const MANY_MATCHES = 2_000;

/** The live subscriptions that may hear of matches: allowed by the person, never a test call's. */
function live(db: PushDb) {
  return matchListeners(db)
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
    .where(({ exists }) => exists(liveSubscription(engineDb(db), "p.id")));
}

/**
 * The live (not ended) push subscriptions that may belong to intents in `found`. A large import can
 * touch most active intents while few have subscriptions: then all live ones are read once.
 */
async function liveSubscriptionsOf(db: PushDb, found: FoundMatches): Promise<Counted[]> {
  // Every live one: the caller skips those of intents without matches.
  if (found.count > MANY_MATCHES) return live(db).execute();
  const intentIds = found.intents;
  const subs = [];
  for (let i = 0; i < intentIds.length; i += 500) {
    for (const sub of await live(db)
      .where("p.intent_id", "in", intentIds.slice(i, i + 500))
      .execute())
      subs.push(sub);
  }
  return subs;
}
