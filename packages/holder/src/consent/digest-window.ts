/**
 * The digest window: at most one match digest per intent per window. The first digest
 * goes at once; a match within the window marks the intent due at the window's end, and the
 * holder's minute timer mails everything since the watermark then. The row carries the state:
 * `digested_at` (when the last digest was sent) and `digest_due_at` (when one that waited is due).
 */
import { sql } from "@doorbell/store";
import type { HolderContext } from "../context.js";
import { type MatchPosition, START } from "../matching/reader.js";

/** A person gets at most one digest per intent in this long, however often offers arrive. */
export const DIGEST_WINDOW_MS = 15 * 60_000;

export function digestWindowMs(ctx: HolderContext): number {
  return ctx.config.digestWindowMs ?? DIGEST_WINDOW_MS;
}

/** What a digest read from the row: the watermark and when the last digest went out. */
export interface DigestState {
  mailed: MatchPosition;
  digestedAt: number | null;
}

/** Whether a digest sent at `digestedAt` still holds the next one back at `now`. */
export function withinWindow(ctx: HolderContext, digestedAt: number | null, now: number): boolean {
  return digestedAt !== null && now < digestedAt + digestWindowMs(ctx);
}

/**
 * When the intent's last digest went out less than a window ago, marks it due at the window's
 * end and answers true: nothing is mailed now. An import that matched many intents mailed lately
 * costs one read each, and a write only for an intent not yet marked: rewriting a row already
 * marked would cost a new row version and a WAL flush on PostgreSQL for every import.
 */
export async function postponeWithinWindow(ctx: HolderContext, intentId: string): Promise<boolean> {
  const window = digestWindowMs(ctx);
  const cutoff = ctx.clock() - window;
  const row = await ctx.store.db
    .selectFrom("holder_intents")
    .select(["digested_at", "digest_due_at"])
    .where("id", "=", intentId)
    .executeTakeFirst();
  if (row?.digested_at == null || Number(row.digested_at) <= cutoff) return false;
  const due = Number(row.digested_at) + window;
  if (row.digest_due_at !== null && Number(row.digest_due_at) === due) return true;
  // From the row as it is then: a digest sent meanwhile moved digested_at, and this match, which
  // it may not have read, is then due at the end of that digest's window.
  const marked = await ctx.store.db
    .updateTable("holder_intents")
    .set((eb) => ({ digest_due_at: eb("digested_at", "+", window) }))
    .where("id", "=", intentId)
    .where("digested_at", ">", cutoff)
    .executeTakeFirst();
  return Number(marked.numUpdatedRows) === 1;
}

/**
 * Sets when the intent's waiting digest is due (null: none waits), if no one changed it since
 * the digest read `read`.
 */
export async function setDigestDue(
  ctx: HolderContext,
  intentId: string,
  read: number | null,
  due: number | null,
): Promise<void> {
  if (read === due) return;
  await ctx.store.db
    .updateTable("holder_intents")
    .set({ digest_due_at: due })
    .where("id", "=", intentId)
    .where((eb) => (read === null ? eb("digest_due_at", "is", null) : eb("digest_due_at", "=", read)))
    .execute();
}

/**
 * Claims the digest up to `head`: moves the watermark from where the digest read it and records
 * the send time, by compare-and-set on both. Of two digests running at once (two processes, or
 * an import beside the timer) only one claims, so no match is mailed twice and no two digests
 * go out within a window.
 */
export async function claimDigest(
  ctx: HolderContext,
  intentId: string,
  read: DigestState,
  head: MatchPosition,
  now: number,
): Promise<boolean> {
  const result = await ctx.store.db
    .updateTable("holder_intents")
    .set({ ...watermark(head), digested_at: now, digest_due_at: null })
    .where("id", "=", intentId)
    .where(atWatermark(read.mailed))
    .where(atDigestedAt(read.digestedAt))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Undoes a claim whose mail failed: the watermark goes back, so the matches are never stuck behind
 * a mail that was not sent, and the try counts as a digest for the window: the intent is due when
 * the window ends, and neither the timer nor an import tries that address again before then. A
 * mail server that refuses is tried once a window per person, not once a minute or per import.
 */
export async function releaseDigest(
  ctx: HolderContext,
  intentId: string,
  read: DigestState,
  head: MatchPosition,
  claimedAt: number,
): Promise<void> {
  await ctx.store.db
    .updateTable("holder_intents")
    .set({ ...watermark(read.mailed), digest_due_at: claimedAt + digestWindowMs(ctx) })
    .where("id", "=", intentId)
    .where(atWatermark(head))
    .where(atDigestedAt(claimedAt))
    .execute();
}

function watermark(to: MatchPosition) {
  return to === START ? { mailed_at: null, mailed_seq: null } : { mailed_at: to.at, mailed_seq: to.id };
}

/** The row is at watermark `at` (SQL, shared by the claim and its undo). */
function atWatermark(at: MatchPosition) {
  return at === START
    ? sql<boolean>`mailed_at is null`
    : sql<boolean>`mailed_at = ${at.at} and mailed_seq = ${at.id}`;
}

function atDigestedAt(at: number | null) {
  return at === null ? sql<boolean>`digested_at is null` : sql<boolean>`digested_at = ${at}`;
}
