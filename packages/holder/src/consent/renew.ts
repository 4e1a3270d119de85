/**
 * Renewing validUntil: the push profile says it "requires the buyer's fresh
 * action", so an agent cannot; the person does it on the manage page of any of the holder's mails.
 * A new end in the future, at most the holder's longest validity from now; only while the intent is
 * active. The matching index learns the new end through the onChanged hook.
 */
import type { HolderContext } from "../context.js";
import { type IntentHooks, intentFromRow, runHook } from "../intents/index.js";
import { renewalEnd } from "../intents/renewal.js";
import { HolderError, type Intent } from "../model/types.js";
import { byManageToken } from "./tokens.js";

export async function renewByManageToken(
  ctx: HolderContext,
  hooks: IntentHooks,
  manageToken: string,
  validUntil: unknown,
): Promise<Intent> {
  const row = await byManageToken(ctx, manageToken);
  const now = ctx.clock();
  const until = renewalEnd(ctx, row, validUntil, "the new end date");
  const updated = await ctx.store.db
    .updateTable("holder_intents")
    .set({ valid_until: until, updated_at: now })
    .where("id", "=", row.id)
    .where("status", "=", "active")
    .where("valid_until", ">", now)
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) !== 1) {
    throw new HolderError("ERR_HOLDER_CONFLICT", "the request changed at the same time; try again");
  }
  ctx.log.info({ event: "intent.renewed", intentId: row.id }, "validUntil renewed by the person");
  const onChanged = hooks.onChanged;
  if (onChanged !== undefined) await runHook(ctx, "onChanged", row.id, () => onChanged(row.id));
  return intentFromRow({ ...row, valid_until: until, updated_at: now }, now);
}
