/** The manage page's list, and the person taking a subscription back (§6 rule 3). */
import { HolderError } from "../model/types.js";
import { emit, engineDb, type Push } from "./context.js";
import { engineView, ownRow, rowsOf } from "./rows.js";
import type { NotificationReceipt } from "./types.js";
import { receipt } from "./views.js";

export async function receipts(push: Push, intentId: string): Promise<NotificationReceipt[]> {
  const out: NotificationReceipt[] = [];
  for (const row of await rowsOf(push.store.db, intentId)) {
    const sub = await engineView(push, push.store.db, row.id);
    if (sub !== undefined) out.push(receipt(push.ctx, row, sub));
  }
  return out;
}

export async function revoke(
  push: Push,
  intentId: string,
  subscriptionId: string,
): Promise<NotificationReceipt> {
  const { ctx } = push;
  const result = await push.store.transaction(async (trx) => {
    const row = await ownRow(trx, intentId, subscriptionId);
    const current = await engineView(push, trx, row.id);
    if (current === undefined)
      throw new HolderError("ERR_HOLDER_GONE", "this subscription has already ended");
    if (current.status === "ended") return receipt(ctx, row, current);
    return receipt(
      ctx,
      row,
      await push.engine.end(engineDb(trx), row.id, "approval-withdrawn", { notify: true }),
    );
  });
  ctx.log.info({ event: "push.revoked", intentId, subscriptionId }, "notifications stopped by the person");
  emit(push, [subscriptionId]);
  return result;
}
