/** When an intent becomes active: settle the consent page's choices and mail pending approval links. */
import { mailApproval } from "./approval.js";
import { emit, engineDb, type Push } from "./context.js";
import { grant, holdArrivals } from "./grant.js";
import { enqueueStatus, liveRows, renewLease } from "./rows.js";

export async function onActivated(push: Push, intentId: string): Promise<void> {
  const { engine } = push;
  const toMail: string[] = [];
  const touched = await push.store.transaction(async (trx) => {
    await holdArrivals(push, trx);
    const intent = await trx
      .selectFrom("holder_intents")
      .select("valid_until")
      .where("id", "=", intentId)
      .executeTakeFirstOrThrow();
    const ids: string[] = [];
    for (const { row } of await liveRows(push, trx, intentId)) {
      ids.push(row.id);
      if (row.approval === "on-consent-page") {
        if (row.consent_choice === 1) {
          await grant(push, trx, row);
          // Made on a draft, its lease ended with the draft's 24 hours: now it may run with the intent.
          await renewLease(push, trx, row, intent.valid_until);
          await enqueueStatus(push, trx, row, "active");
        } else {
          // §6 rule 3: confirmed without the separate choice, the subscription ends.
          await engine.end(engineDb(trx), row.id, "approval-withdrawn", { notify: false });
        }
      } else if (row.approval === "sent-to-verified-channel") {
        toMail.push(row.id);
      } else if (row.test === 0) {
        // A test call's subscription heard the status once when it was made (rule 9), and no more.
        await enqueueStatus(push, trx, row, "active");
      }
    }
    return ids;
  });
  for (const id of toMail) await mailApproval(push, intentId, id);
  emit(push, touched);
}
