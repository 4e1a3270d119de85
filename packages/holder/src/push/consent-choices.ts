/** The consent page's separate, unticked choices (§6 rule 3) and what the person ticked. */
import type { Push } from "./context.js";
import { liveRows } from "./rows.js";
import type { NotificationReceipt } from "./types.js";
import { receipt } from "./views.js";

export async function consentChoices(push: Push, intentId: string): Promise<NotificationReceipt[]> {
  const out: NotificationReceipt[] = [];
  for (const { row, sub } of await liveRows(push, push.store.db, intentId)) {
    if (row.approval === "on-consent-page") out.push(receipt(push.ctx, row, sub));
  }
  return out;
}

export async function chooseOnConsent(
  push: Push,
  intentId: string,
  chosenIds: readonly string[],
): Promise<void> {
  const chosen = new Set(chosenIds);
  await push.store.transaction(async (trx) => {
    for (const { row } of await liveRows(push, trx, intentId)) {
      if (row.approval !== "on-consent-page") continue;
      await trx
        .updateTable("holder_push")
        .set({ consent_choice: chosen.has(row.id) ? 1 : 0 })
        .where("id", "=", row.id)
        .execute();
    }
  });
}
