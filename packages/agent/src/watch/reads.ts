/**
 * One read of an intent's matches (push profile §8.1): since = the newest deliveredAt seen, handed
 * to the app, then the cursor moves on. The holder's deliveredAt has millisecond precision, so the
 * read asks from one millisecond earlier and drops the offers already seen at that instant
 * (decisions.md, intent_list_matches): nothing recorded in the same millisecond is skipped.
 */
import { isAgentError } from "../errors.js";
import type { Match } from "../holder/results.js";
import type { WatchState } from "../state/schema.js";
import type { WatchContext } from "./context.js";
import { handleOf, reportOf, usesDoorbells } from "./report.js";

export const FINAL_STATUSES = new Set(["withdrawn", "expired"]);

export async function readMatches(ctx: WatchContext, watch: WatchState): Promise<Match[]> {
  const doorbellMode = usesDoorbells(watch);
  const cursorMs = watch.cursor === undefined ? undefined : Date.parse(watch.cursor.at);
  const since = cursorMs === undefined ? undefined : new Date(cursorMs - 1).toISOString();
  const { matches } = await ctx.client.listMatches(watch.code, since === undefined ? {} : { since });
  watch.pacing = ctx.client.pacing(watch.code);

  const fresh = matches.filter((match) => {
    if (cursorMs === undefined) return true;
    const at = Date.parse(match.deliveredAt);
    return at > cursorMs || (at === cursorMs && !watch.cursor?.offerIds.includes(match.offer.id));
  });
  if (fresh.length > 0) {
    try {
      await ctx.hooks.onMatches?.(handleOf(watch), fresh);
    } catch (error) {
      // The cursor stays: the next read hands the same matches over again.
      await ctx.box.commit();
      throw error;
    }
    watch.cursor = advance(watch.cursor, fresh);
    noticeGap(ctx, watch, fresh, doorbellMode);
  }
  await ctx.box.commit();
  return fresh;
}

function advance(cursor: WatchState["cursor"], fresh: readonly Match[]): NonNullable<WatchState["cursor"]> {
  let newest = cursor === undefined ? Number.NEGATIVE_INFINITY : Date.parse(cursor.at);
  for (const match of fresh) newest = Math.max(newest, Date.parse(match.deliveredAt));
  const at = new Date(newest).toISOString();
  const ids = new Set(cursor !== undefined && Date.parse(cursor.at) === newest ? cursor.offerIds : []);
  for (const match of fresh) if (Date.parse(match.deliveredAt) === newest) ids.add(match.offer.id);
  return { at, offerIds: [...ids] };
}

/** §8.4: matches older than the coalescing window that no doorbell announced mean one was missed. */
function noticeGap(
  ctx: WatchContext,
  watch: WatchState,
  fresh: readonly Match[],
  doorbellMode: boolean,
): void {
  if (!doorbellMode) return;
  const announced =
    watch.announcedUpTo === undefined ? Number.NEGATIVE_INFINITY : Date.parse(watch.announcedUpTo);
  const cutoff = ctx.clock() - ctx.timing.gapGraceMs;
  const missed = fresh.some((match) => {
    const at = Date.parse(match.deliveredAt);
    return at > announced && at < cutoff;
  });
  if (!missed) return;
  watch.gapAt = ctx.clock();
  void Promise.resolve(ctx.hooks.onSubscription?.(handleOf(watch), reportOf(watch))).catch(() => {});
}

/** In polling mode the intent's status is read too, so the app hears of confirmation or withdrawal. */
export async function readStatus(ctx: WatchContext, watch: WatchState): Promise<void> {
  try {
    const intent = await ctx.client.get(watch.code);
    watch.intentId = intent.id;
    await noteStatus(ctx, watch, intent.status);
  } catch (error) {
    if (isAgentError(error)) ctx.hooks.onError?.(handleOf(watch), error);
    else throw error;
  }
}

export async function noteStatus(ctx: WatchContext, watch: WatchState, status: string): Promise<void> {
  if (watch.intentStatus === status) return;
  watch.intentStatus = status;
  await ctx.box.commit();
  await ctx.hooks.onStatus?.(handleOf(watch), status);
}
