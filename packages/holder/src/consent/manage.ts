/** The manage page of every e-mail: the intent and its matches, and withdrawing in one action. */
import type { HolderContext } from "../context.js";
import { type IntentHooks, intentFromRow, withdrawIntent } from "../intents/index.js";
import { readMatches, START } from "../matching/reader.js";
import type { Intent, Match } from "../model/types.js";
import { byManageToken } from "./tokens.js";

/** The manage page shows at most this many matches, newest first. */
export const MANAGE_MATCHES_MAX = 200;

export async function manageView(
  ctx: HolderContext,
  manageToken: string,
): Promise<{ intent: Intent; matches: Match[] }> {
  const row = await byManageToken(ctx, manageToken);
  const all = await readMatches(ctx.store.db, row.id, START);
  return {
    intent: intentFromRow(row, ctx.clock()),
    matches: all
      .slice(-MANAGE_MATCHES_MAX)
      .reverse()
      .map(({ offer, deliveredAt }) => ({ offer, deliveredAt: new Date(deliveredAt).toISOString() })),
  };
}

export async function withdrawByManageToken(
  ctx: HolderContext,
  hooks: IntentHooks,
  manageToken: string,
): Promise<Intent> {
  const row = await byManageToken(ctx, manageToken);
  const ended = await withdrawIntent(ctx, hooks, row.id);
  return intentFromRow(ended.row, ctx.clock());
}
