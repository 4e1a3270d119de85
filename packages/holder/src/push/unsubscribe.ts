/** intent_unsubscribe_events and the subscription resource's read, both by the intentCode's holder. */
import { HolderError, type Principal } from "../model/types.js";
import { emit, engineDb, type Push } from "./context.js";
import { engineView, intentIdOf, ownRow } from "./rows.js";
import type { PushSubscriptionView } from "./types.js";
import { answer } from "./views.js";

export async function unsubscribe(
  push: Push,
  principal: Principal,
  subscriptionId: string,
): Promise<PushSubscriptionView> {
  const intentId = intentIdOf(principal);
  const view = await push.store.transaction(async (trx) => {
    const row = await ownRow(trx, intentId, subscriptionId);
    const sub = await engineView(push, trx, row.id);
    if (sub === undefined)
      throw new HolderError("ERR_HOLDER_NOT_FOUND", "this subscription has ended and been deleted");
    // The agent asked: its answer says ended, so no subscription.ended follows.
    return answer(row, await push.engine.end(engineDb(trx), row.id, "unsubscribed", { notify: false }));
  });
  emit(push, [subscriptionId]);
  return view;
}

export async function viewSubscription(
  push: Push,
  principal: Principal,
  subscriptionId: string,
): Promise<PushSubscriptionView> {
  const row = await ownRow(push.store.db, intentIdOf(principal), subscriptionId);
  const sub = await engineView(push, push.store.db, row.id);
  if (sub === undefined)
    throw new HolderError("ERR_HOLDER_NOT_FOUND", "this subscription has ended and been deleted");
  return answer(row, sub);
}
