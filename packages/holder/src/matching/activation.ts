import { notify } from "./arrival.js";
import { ready } from "./load.js";
import { lastArrival, readMatches, START } from "./reader.js";
import { intentFilter } from "./rule.js";
import { FILTER_COLUMNS, type MatchingState, remember } from "./state.js";

/**
 * An intent joins or leaves this process's index: activated or changed here (`onActivated`),
 * ended (`onEnded`), or changed by another process (`refresh`). Joining rings for what imports
 * wrote before the index knew the intent (the catch-up) and tells the intent.
 */

export async function onActivated(state: MatchingState, intentId: string): Promise<{ matched: number }> {
  await ready(state);
  const { store } = state;
  const row = await store.db
    .selectFrom("holder_intents")
    .select([...FILTER_COLUMNS, "status", "matching_since", "updated_at"])
    .where("id", "=", intentId)
    .executeTakeFirst();
  state.index.remove(intentId);
  if (row === undefined || row.status !== "active") return { matched: 0 };
  const filter = intentFilter(row);
  if (filter === undefined) return { matched: 0 };
  state.index.add(filter);
  // In the index first, then the catch-up under the arrivals lock: a batch that matched
  // before the intent was there commits first and is counted here; every later batch counts
  // itself. Each subscription's doorbells count a match once (push/enqueue-matches.ts).
  const counted = await catchUp(state, intentId);
  remember(state, intentId, row.matching_since);
  // Told only when the criteria took effect with this change (activation, new criteria or
  // budget), not when another field changed: what a first read shows, at matching_since.
  const fresh = row.matching_since !== null && Number(row.matching_since) === Number(row.updated_at);
  const matched = fresh ? (await readMatches(store.db, intentId, START)).length : 0;
  if (matched > 0 || counted > 0) await notify(state, [intentId]);
  return { matched };
}

export function onEnded(state: MatchingState, intentId: string): void {
  state.index.remove(intentId);
  state.endedDuringLoad?.add(intentId);
}

/** refresh(): the index follows; then what no doorbell counted yet is rung and the intent told. */
export async function refresh(state: MatchingState, intentId: string): Promise<void> {
  await ready(state);
  const since = await follow(state, intentId);
  if (since === undefined) return;
  const counted = await catchUp(state, intentId);
  remember(state, intentId, since);
  // The digest reads from its own watermark (telling twice mails nothing twice): told when a
  // doorbell rang or a match waits for the mail, not on every refresh.
  if (counted > 0 || (await unmailed(state, intentId))) await notify(state, [intentId]);
}

/**
 * Rings for `intentId`'s matches no doorbell counted yet. The caller has put the intent in the
 * index first: the arrivals lock then waits for every import batch that matched without it, and
 * every batch after this one matches with it.
 */
async function catchUp(state: MatchingState, intentId: string): Promise<number> {
  const { store } = state;
  const sink = state.options.sink;
  if (sink === undefined) return 0;
  return store.transaction(async (trx) => {
    await lastArrival(trx, store.dialect);
    return sink.catchUpMatches(trx, intentId);
  });
}

/**
 * Follows the database for one intent: its matching_since when it is active with criteria (in
 * the index now), else undefined (out of it).
 */
async function follow(state: MatchingState, intentId: string): Promise<number | null | undefined> {
  const row = await state.store.db
    .selectFrom("holder_intents")
    .select([...FILTER_COLUMNS, "status", "matching_since"])
    .where("id", "=", intentId)
    .executeTakeFirst();
  const filter = row?.status === "active" ? intentFilter(row) : undefined;
  state.index.remove(intentId);
  if (filter === undefined) state.endedDuringLoad?.add(intentId);
  else state.index.add(filter);
  return filter === undefined ? undefined : (row?.matching_since ?? null);
}

/** Whether a confirmed intent has matches after its digest's watermark. */
async function unmailed(state: MatchingState, intentId: string): Promise<boolean> {
  const { store } = state;
  const row = await store.db
    .selectFrom("holder_intents")
    .select(["confirmed_at", "mailed_at", "mailed_seq"])
    .where("id", "=", intentId)
    .executeTakeFirst();
  if (row === undefined || row.confirmed_at === null) return false;
  const mailed = row.mailed_at === null ? START : { at: Number(row.mailed_at), id: Number(row.mailed_seq) };
  return (await readMatches(store.db, intentId, mailed)).length > 0;
}
