/**
 * The match digest to the verified channel (consent-link rule 6): each match mailed once, at most
 * one digest per intent per window (digest-window.ts).
 */

import { atMostAtOnce } from "../at-most-at-once.js";
import type { HolderContext } from "../context.js";
import { consentLanguage } from "../i18n/consent-texts.js";
import { effectiveStatus, manageUrl, openContact, sendQuietly } from "../intents/index.js";
import { SMTP_CONNECTIONS } from "../mail/smtp.js";
import { matchDigestMail } from "../mail/templates.js";
import { readMatches, START } from "../matching/reader.js";
import {
  claimDigest,
  type DigestState,
  postponeWithinWindow,
  releaseDigest,
  setDigestDue,
  withinWindow,
} from "./digest-window.js";

/** A digest lists at most this many offers; the rest are counted and shown on the manage page. */
export const DIGEST_LIST_MAX = 20;

/**
 * Seller replies wait this long for more before they are mailed: ten replies
 * in a quarter of an hour are one digest, not ten mails. A catalogue match's digest carries the
 * waiting replies with it; `sendDueDigests` mails the rest when their time is up.
 */
export const REPLY_COALESCE_MS = 15 * 60_000;

/**
 * E-mails the person the intent's matches not mailed yet, newest first, and moves the watermark.
 * Only for an active intent with a verified channel. At most one digest per window:
 * within the window of the last one, nothing is mailed and the intent is due at the window's end
 * (`sendDueDigests` mails it). Returns how many matches the mail carried.
 */
export async function sendMatchDigest(ctx: HolderContext, intentId: string): Promise<number> {
  if (await postponeWithinWindow(ctx, intentId)) return 0;
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
  const read: DigestState = {
    mailed: row.mailed_at === null ? START : { at: Number(row.mailed_at), id: Number(row.mailed_seq) },
    digestedAt: row.digested_at === null ? null : Number(row.digested_at),
  };
  const due = row.digest_due_at === null ? null : Number(row.digest_due_at);
  // A digest that went out since the check above (another process) holds this one back too.
  if (withinWindow(ctx, read.digestedAt, now)) {
    await postponeWithinWindow(ctx, intentId);
    return 0;
  }
  const pending = await readMatches(ctx.store.db, row.id, read.mailed);
  const head = pending.at(-1)?.position;
  if (head === undefined) {
    await setDigestDue(ctx, intentId, due, null); // nothing waits: the timer need not look again
    return 0;
  }
  const oldest = pending[0] as (typeof pending)[number];
  if (
    pending.every(({ offer }) => offer.source.kind === "reply") &&
    now - oldest.deliveredAt < REPLY_COALESCE_MS
  ) {
    // Replies only, the first of them still fresh: more may come; due when it is old enough.
    await setDigestDue(ctx, intentId, due, oldest.deliveredAt + REPLY_COALESCE_MS);
    return 0;
  }
  const contact = openContact(ctx, intentId, row.contact_sealed);
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
  // Claimed only once the mail is ready: nothing between the claim and the send can throw.
  if (!(await claimDigest(ctx, intentId, read, head, now))) {
    // Another digest claimed first and carried what it read; what it did not waits for the window.
    await postponeWithinWindow(ctx, intentId);
    return 0;
  }
  if (await sendQuietly(ctx, { to: contact.email, ...mail }, "match_digest", intentId)) return pending.length;
  // The matches wait for the next digest, due when the window of this try ends.
  await releaseDigest(ctx, intentId, read, head, now);
  return 0;
}

/**
 * Mails the digests that waited (the holder runs this every minute): those whose window ended
 * (`digest_due_at`, one indexed range) and those of seller replies whose first reply is now
 * REPLY_COALESCE_MS old. Returns how many matches the mails carried.
 */
export async function sendDueDigests(ctx: HolderContext, signal?: AbortSignal): Promise<number> {
  const now = ctx.clock();
  const windowDue = await ctx.store.db
    .selectFrom("holder_intents")
    .select("id")
    .where("digest_due_at", "<=", now)
    .where("status", "=", "active")
    .where("confirmed_at", "is not", null)
    .execute();
  const cutoff = now - REPLY_COALESCE_MS;
  const repliesDue = await ctx.store.db
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
  // A few at a time, one per kept SMTP connection, as an import's digests go.
  let sent = 0;
  const due = new Set([...windowDue, ...repliesDue].map((row) => row.id));
  await atMostAtOnce(SMTP_CONNECTIONS, due, async (id) => {
    // Each digest is claimed before it is sent; none is started once this process lost the lead.
    if (signal?.aborted !== true) sent += await sendMatchDigest(ctx, id);
  });
  return sent;
}
