/** Expiry: drafts nobody consented to, confirmations nobody clicked, intents past validUntil. */
import type { Intents } from "./context.js";
import { runHook } from "./hooks.js";

/** How many rows `expireDue` changes per statement. */
const EXPIRE_BATCH = 500;

/** Each batch is claimed by a conditional update; none is started once `signal` aborted. */
export async function expireDue(intents: Intents, signal?: AbortSignal): Promise<number> {
  const { ctx, hooks } = intents;
  const now = ctx.clock();
  let total = 0;
  const ended: string[] = [];
  const kinds = [
    { status: "awaiting_consent", column: "draft_expires_at" },
    { status: "awaiting_email_confirmation", column: "confirm_expires_at" },
    { status: "active", column: "valid_until" },
  ] as const;
  for (const kind of kinds) {
    while (signal?.aborted !== true) {
      const ids = await ctx.store.db
        .selectFrom("holder_intents")
        .select("id")
        .where("status", "=", kind.status)
        .where(kind.column, "<=", now)
        .limit(EXPIRE_BATCH)
        .execute();
      if (ids.length === 0) break;
      const changed = await ctx.store.db
        .updateTable("holder_intents")
        .set({ status: "expired", ended_at: now, updated_at: now, contact_sealed: null, contact_hash: null })
        .where(
          "id",
          "in",
          ids.map((r) => r.id),
        )
        .where("status", "=", kind.status)
        .where(kind.column, "<=", now)
        .returning("id")
        .execute();
      total += changed.length;
      if (kind.status === "active") ended.push(...changed.map((r) => r.id));
      if (ids.length < EXPIRE_BATCH) break;
    }
  }
  if (total > 0) ctx.log.info({ event: "intent.expired", count: total }, "intents expired");
  for (const intentId of ended)
    await runHook(ctx, "onEnded", intentId, () => hooks.onEnded(intentId, "expired"));
  return total;
}
