/** The double opt-in link: activates the intent and starts matching. */
import type { HolderContext } from "../context.js";
import { effectiveStatus, findByToken, type IntentHooks, intentFromRow, runHook } from "../intents/index.js";
import { HolderError, type Intent } from "../model/types.js";
import { goneMessage, wellFormed } from "./tokens.js";

export async function confirmEmail(
  ctx: HolderContext,
  hooks: IntentHooks,
  confirmToken: string,
): Promise<Intent> {
  const notValid = () =>
    new HolderError(
      "ERR_HOLDER_NOT_FOUND",
      "this confirmation link is not valid; open it from the holder's e-mail",
    );
  if (!wellFormed(confirmToken)) throw notValid();
  const now = ctx.clock();
  const result = await ctx.store.transaction(async (trx) => {
    const found = await findByToken(ctx, "confirm_token_hash", confirmToken, trx);
    if (found === undefined) throw notValid();
    const row = found.row;
    const status = effectiveStatus(row, now);
    // A second click (or a mail scanner's) on a confirmed intent changes nothing.
    if (status === "active") return { row, activated: false };
    if (status === "expired" || status === "withdrawn") {
      throw new HolderError(
        "ERR_HOLDER_GONE",
        row.confirmed_at !== null
          ? `this intent has ${status === "expired" ? "expired" : "been withdrawn"}`
          : goneMessage(status),
      );
    }
    if (status !== "awaiting_email_confirmation") throw notValid();
    const updated = await trx
      .updateTable("holder_intents")
      .set({ status: "active", confirmed_at: now, updated_at: now, matching_since: now })
      .where("id", "=", row.id)
      .where("status", "=", "awaiting_email_confirmation")
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) !== 1)
      throw new HolderError("ERR_HOLDER_CONFLICT", "the intent changed at the same time; try again");
    return {
      row: { ...row, status: "active" as const, confirmed_at: now, updated_at: now, matching_since: now },
      activated: true,
    };
  });
  if (result.activated) {
    const id = result.row.id;
    ctx.log.info({ event: "intent.activated", intentId: id }, "e-mail confirmed; intent active");
    await runHook(ctx, "onActivated", id, () => hooks.onActivated(id));
  }
  return intentFromRow(result.row, now);
}
