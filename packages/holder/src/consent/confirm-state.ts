/**
 * Where a double opt-in link stands, read without using it, so the page can say "already
 * confirmed" before it shows a button. Reading changes nothing: mail scanners
 * open these links too.
 */
import type { HolderContext } from "../context.js";
import { effectiveStatus, findByToken, PAGE_TOKEN } from "../intents/index.js";

export type ConfirmState = "open" | "confirmed" | "ended" | "unknown";

export async function confirmState(ctx: HolderContext, confirmToken: unknown): Promise<ConfirmState> {
  if (typeof confirmToken !== "string" || !PAGE_TOKEN.test(confirmToken)) return "unknown";
  const found = await findByToken(ctx, "confirm_token_hash", confirmToken);
  if (found === undefined) return "unknown";
  const status = effectiveStatus(found.row, ctx.clock());
  if (status === "awaiting_email_confirmation") return "open";
  // An intent that was confirmed keeps its confirm hash: this link has done its work.
  if (status === "active" || found.row.confirmed_at !== null) return "confirmed";
  return status === "expired" || status === "withdrawn" ? "ended" : "unknown";
}
