/** The consent page's separate, unticked choices (§6 rule 3) and what the person ticked. */
import type { Push } from "./context.js";
import { liveRows, renewLease } from "./rows.js";
import type { NotificationReceipt } from "./types.js";
import { receipt } from "./views.js";

export async function consentChoices(push: Push, intentId: string): Promise<NotificationReceipt[]> {
  const out: NotificationReceipt[] = [];
  for (const { row, sub } of await liveRows(push, push.store.db, intentId)) {
    if (row.approval === "on-consent-page") out.push(receipt(push.ctx, row, sub));
  }
  return out;
}

/**
 * Records the ticked choices. A ticked subscription was made on the draft, with the draft's lease
 * (at most 24 hours); the confirmation link lasts longer, so its lease now runs until that link
 * expires: the choice survives until confirmation (push rule 3).
 */
export async function chooseOnConsent(
  push: Push,
  intentId: string,
  chosenIds: readonly string[],
): Promise<void> {
  const chosen = new Set(chosenIds);
  const now = push.ctx.clock();
  await push.store.transaction(async (trx) => {
    const intent = await trx
      .selectFrom("holder_intents")
      .select(["confirm_expires_at", "valid_until"])
      .where("id", "=", intentId)
      .executeTakeFirst();
    const confirmEnds = Math.min(
      intent?.confirm_expires_at ?? now + push.ctx.config.confirmTtlMs,
      intent?.valid_until ?? now,
    );
    for (const { row, sub } of await liveRows(push, trx, intentId)) {
      if (row.approval !== "on-consent-page") continue;
      const ticked = chosen.has(row.id);
      await trx
        .updateTable("holder_push")
        .set({ consent_choice: ticked ? 1 : 0 })
        .where("id", "=", row.id)
        .execute();
      if (ticked && sub.expiresAt < confirmEnds && confirmEnds > now) {
        await renewLease(push, trx, row, confirmEnds);
      }
    }
  });
}
