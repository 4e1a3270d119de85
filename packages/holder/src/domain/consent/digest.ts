/** The match digest to the verified channel (consent-link rule 6): each match mailed once. */
import type { HolderContext } from "../../context.js";
import { consentLanguage } from "../../i18n/consent-texts.js";
import { matchDigestMail } from "../../mail/templates.js";
import { type MatchPosition, readMatches, START } from "../../matching/reader.js";
import { effectiveStatus, manageUrl, openContact, sendQuietly } from "../intents.js";

/** A digest lists at most this many offers; the rest are counted and shown on the manage page. */
export const DIGEST_LIST_MAX = 20;

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
