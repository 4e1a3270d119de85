/** The match digest to the verified channel (consent-link rule 6): each match mailed once. */
import type { HolderContext } from "../../context.js";
import { consentLanguage } from "../../i18n/consent-texts.js";
import { matchDigestMail } from "../../mail/templates.js";
import { type MatchPosition, readMatches, START } from "../../matching/reader.js";
import { effectiveStatus, manageUrl, openContact, sendQuietly } from "../intents.js";

/** A digest lists at most this many offers; the rest are counted and shown on the manage page. */
export const DIGEST_LIST_MAX = 20;

/**
 * Seller replies wait this long for more before they are mailed (issue 16 item 9): ten replies
 * in a quarter of an hour are one digest, not ten mails. A catalogue match mails at once and
 * carries the waiting replies with it; `sendDueDigests` mails the rest when their time is up.
 */
export const REPLY_COALESCE_MS = 15 * 60_000;

/**
 * E-mails the person the intent's matches not mailed yet, newest first, and moves the watermark.
 * Only for an active intent with a verified channel. Returns how many matches the mail carried.
 */
export async function sendMatchDigest(ctx: HolderContext, intentId: string): Promise<number> {
  const now = ctx.clock();
  const row = await ctx.store.db
    .selectFrom("holder_intents")
    .selectAll()
    .where("id", "=", intentId)
    .executeTakeFirst();
  if (
    row === undefined ||
    effectiveStatus(row, now) !== "active" ||
    row.confirmed_at === null ||
    row.contact_sealed === null
  ) {
    return 0;
  }
  const contact = openContact(ctx, intentId, row.contact_sealed);
  const mailed = row.mailed_at === null ? START : { at: Number(row.mailed_at), id: Number(row.mailed_seq) };
  const pending = await readMatches(ctx.store.db, row.id, mailed);
  const head = pending.at(-1)?.position;
  if (head === undefined) return 0;
  const oldest = pending[0] as (typeof pending)[number];
  if (
    pending.every(({ offer }) => offer.source.kind === "reply") &&
    now - oldest.deliveredAt < REPLY_COALESCE_MS
  ) {
    return 0; // replies only, the first of them still fresh: more may come (sendDueDigests mails them)
  }
  // Claim by moving the watermark from where this digest read it: of two digests running at
  // once only one moves it, so no match is mailed twice.
  if (!(await moveDigestWatermark(ctx, intentId, mailed, head))) return 0;
  const listed = pending.slice(-DIGEST_LIST_MAX).reverse();
  const mail = matchDigestMail({
    holderName: ctx.config.name,
    statement: row.statement,
    manageUrl: manageUrl(ctx, contact.manageToken),
    matches: listed.map(({ offer }) => ({
      title: offer.title,
      price: offer.price,
      location: offer.location,
      ...(offer.url === undefined ? {} : { url: offer.url }),
    })),
    more: pending.length - listed.length,
    lang: consentLanguage(ctx.config, row.consent_version),
  });
  if (await sendQuietly(ctx, { to: contact.email, ...mail }, "match_digest", intentId)) return pending.length;
  // The matches wait for the next digest.
  await moveDigestWatermark(ctx, intentId, head, mailed);
  return 0;
}

/**
 * Mails the digests that waited for more replies and whose first reply is now REPLY_COALESCE_MS
 * old (the holder runs this every minute). Returns how many matches the mails carried.
 */
export async function sendDueDigests(ctx: HolderContext): Promise<number> {
  const cutoff = ctx.clock() - REPLY_COALESCE_MS;
  const due = await ctx.store.db
    .selectFrom("holder_offers as o")
    .innerJoin("holder_intents as i", "i.id", "o.in_reply_to")
    .select("i.id")
    .distinct()
    .where("o.source_kind", "=", "reply")
    .where("o.matched_at", "<=", cutoff)
    .where("i.status", "=", "active")
    .where("i.confirmed_at", "is not", null)
    .where((eb) =>
      eb.or([
        eb("i.mailed_at", "is", null),
        eb("o.matched_at", ">", eb.ref("i.mailed_at")),
        eb.and([
          eb("o.matched_at", "=", eb.ref("i.mailed_at")),
          eb("o.match_seq", ">", eb.ref("i.mailed_seq")),
        ]),
      ]),
    )
    .execute();
  let sent = 0;
  for (const { id } of due) sent += await sendMatchDigest(ctx, id);
  return sent;
}

/** Moves an intent's digest watermark from `from` to `to`; false if it was not at `from`. */
async function moveDigestWatermark(
  ctx: HolderContext,
  intentId: string,
  from: MatchPosition,
  to: MatchPosition,
): Promise<boolean> {
  const result = await ctx.store.db
    .updateTable("holder_intents")
    .set(to === START ? { mailed_at: null, mailed_seq: null } : { mailed_at: to.at, mailed_seq: to.id })
    .where("id", "=", intentId)
    .where((eb) =>
      from === START
        ? eb("mailed_at", "is", null)
        : eb.and([eb("mailed_at", "=", from.at), eb("mailed_seq", "=", from.id)]),
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
