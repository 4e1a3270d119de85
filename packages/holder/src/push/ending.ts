/** Subscriptions end with their intent (§4.2), and the engine's purged ones are forgotten. */

import { liveSubscription, storedSubscription } from "@doorbell/delivery";
import { checkedDoorbell } from "@doorbell/intents";
import { effectiveStatus } from "../intents/index.js";
import { emit, engineDb, type Push } from "./context.js";
import { liveRows, STATUS_EVENT } from "./rows.js";
import { eventsOf, iso } from "./views.js";

/**
 * Ends every live subscription of the intent, telling each agent once: first that the intent's
 * status changed (withdrawn or expired, for those that asked for status doorbells; push rule 3),
 * then subscription.ended.
 */
export async function endAll(push: Push, intentId: string, reason: string): Promise<string[]> {
  const status =
    reason === "intent-withdrawn" ? "withdrawn" : reason === "intent-expired" ? "expired" : undefined;
  const ended = await push.store.transaction(async (trx) => {
    const ids: string[] = [];
    for (const { row } of await liveRows(push, trx, intentId)) {
      // A test call's subscription heard the status once when it was made (rule 9), and no more.
      const lastEvents =
        status !== undefined && row.test === 0 && eventsOf(row).includes(STATUS_EVENT)
          ? [checkedDoorbell(STATUS_EVENT, iso(push.ctx.clock()), { subscriptionId: row.id, status })]
          : [];
      await push.engine.end(engineDb(trx), row.id, reason, { notify: true, lastEvents });
      ids.push(row.id);
    }
    return ids;
  });
  emit(push, ended);
  return ended;
}

export async function onIntentEnded(
  push: Push,
  intentId: string,
  reason: "withdrawn" | "expired",
): Promise<void> {
  await endAll(push, intentId, `intent-${reason}`);
}

/** Ends subscriptions of intents that ended without a hook (drafts, missed expiries); forgets purged ones. */
export async function sweep(push: Push): Promise<number> {
  const { store } = push;
  const now = push.ctx.clock();
  const rows = await store.db
    .selectFrom("holder_push as p")
    .innerJoin("holder_intents as i", "i.id", "p.intent_id")
    .selectAll("i")
    .where(({ exists }) => exists(liveSubscription(engineDb(store.db), "p.id")))
    .where((eb) =>
      eb.or([
        eb("i.status", "in", ["expired", "withdrawn"]),
        eb("i.valid_until", "<=", now),
        eb.and([eb("i.status", "=", "awaiting_consent"), eb("i.draft_expires_at", "<=", now)]),
      ]),
    )
    .execute();
  let ended = 0;
  for (const intent of new Map(rows.map((row) => [row.id, row])).values()) {
    const status = effectiveStatus(intent, now);
    ended += (await endAll(push, intent.id, status === "withdrawn" ? "intent-withdrawn" : "intent-expired"))
      .length;
  }
  // The engine purged these (§6 rule 7): forget the holder's side too.
  await store.db
    .deleteFrom("holder_push")
    .where(({ not, exists }) => not(exists(storedSubscription(engineDb(store.db), "holder_push.id"))))
    .execute();
  return ended;
}

/** Tells listeners about the subscriptions of these intents (after a commit). */
export async function changed(push: Push, intentIds: readonly string[]): Promise<void> {
  if (push.listeners.size === 0 || intentIds.length === 0) return;
  const ids: string[] = [];
  for (let i = 0; i < intentIds.length; i += 500) {
    const rows = await push.store.db
      .selectFrom("holder_push")
      .select("id")
      .where("intent_id", "in", intentIds.slice(i, i + 500))
      .execute();
    ids.push(...rows.map((row) => row.id));
  }
  emit(push, ids);
}
