/**
 * Signing a person in by a one-time e-mail link: the same verified channel as consent-link's
 * double opt-in. The link names the sign-in (the provider's interaction uid) and a one-time token;
 * both are stored only as keyed hashes, the address only sealed. A link works once, for 15
 * minutes, and only for the sign-in it was made for. Opening it (a POST from its page: mail
 * scanners open links) gives the person's account: found by the keyed hash of the address, or
 * made then. The account id (`acc_…`) is the subject of the tokens; it says nothing about the person.
 */

import type { Database } from "@doorbell/store";
import type { HolderContext } from "../context.js";
import { mailWordsFor } from "../i18n/mail-words.js";
import { newPageToken, randomBase62 } from "../intents/index.js";
import { normaliseEmail } from "../mail/address.js";
import { DEFAULT_LANG, type Lang } from "../model/languages.js";
import { quoteName } from "../model/quoting.js";
import { SIGNIN_PATH } from "../model/scopes.js";
import type { OAuthTables } from "./schema.js";

const LINK_TTL_MS = 15 * 60_000;
const signinAad = (tokenHash: string) => `holder.oauth.signin:${tokenHash}`;
const accountAad = (accountId: string) => `holder.oauth.account:${accountId}`;

export type SignInContext = Pick<
  HolderContext,
  "sealer" | "codes" | "contacts" | "mailer" | "config" | "clock" | "log"
> & {
  store: Database<OAuthTables>;
};

export const signInLinkUrl = (publicUrl: string, uid: string, token: string): string =>
  `${publicUrl}${SIGNIN_PATH}/${uid}/link/${token}`;

/**
 * Mails a sign-in link for interaction `uid` to `email`, in the language of the page that asked
 * for it (refuses a malformed address with HolderError).
 */
export async function sendSignInLink(
  ctx: SignInContext,
  uid: string,
  email: string,
  clientName: string,
  lang: Lang = DEFAULT_LANG,
): Promise<void> {
  const address = normaliseEmail(email);
  const token = newPageToken();
  const tokenHash = ctx.codes.hash(token);
  await ctx.store.db
    .insertInto("holder_oauth_signins")
    .values({
      token_hash: tokenHash,
      interaction_hash: ctx.codes.hash(uid),
      email_sealed: ctx.sealer.seal(address.address, signinAad(tokenHash)),
      expires_at: ctx.clock() + LINK_TTL_MS,
      used_at: null,
    })
    .execute();
  const url = signInLinkUrl(ctx.config.publicUrl, uid, token);
  // The client's name is its own words: one short line, quoted, never a link.
  const quotedName = quoteName(clientName);
  const words = mailWordsFor(lang).signIn;
  const text = [
    words.asked(ctx.config.name),
    "",
    `> ${quotedName}`,
    "",
    `${words.open} ${url}`,
    "",
    words.notYou,
  ].join("\n");
  const html = `<div lang="${lang}"><p>${escapeHtml(words.asked(ctx.config.name))}</p><blockquote style="margin:0 0 1em;padding:0 1em;border-left:3px solid #999">${escapeHtml(quotedName)}</blockquote><p><a href="${escapeHtml(url)}">${escapeHtml(words.link)}</a>${escapeHtml(words.linkAfter)}</p><p>${escapeHtml(words.notYou)}</p></div>`;
  await ctx.mailer.send({ to: address.address, subject: words.subject(ctx.config.name), text, html });
  ctx.log.info({ event: "oauth.signin_link_sent" }, "sign-in link sent");
}

/** Uses the link once: the account it signs in, or undefined (unknown, used, expired, other sign-in). */
export async function useSignInLink(
  ctx: SignInContext,
  uid: string,
  token: string,
): Promise<string | undefined> {
  const now = ctx.clock();
  const rows = await ctx.store.db
    .selectFrom("holder_oauth_signins")
    .selectAll()
    .where("token_hash", "in", ctx.codes.lookupHashes(token))
    .execute();
  const row = rows.find((r) => ctx.codes.verify(token, r.token_hash));
  if (row === undefined || row.used_at !== null || Number(row.expires_at) <= now) return undefined;
  if (!ctx.codes.verify(uid, row.interaction_hash)) return undefined;
  const used = await ctx.store.db
    .updateTable("holder_oauth_signins")
    .set({ used_at: now, email_sealed: "" })
    .where("token_hash", "=", row.token_hash)
    .where("used_at", "is", null)
    .executeTakeFirst();
  if (Number(used.numUpdatedRows) !== 1) return undefined;
  const email = ctx.sealer.openText(row.email_sealed, signinAad(row.token_hash));
  return accountFor(ctx, email);
}

/** The account of a verified address, made on first sign-in. */
export async function accountFor(ctx: SignInContext, email: string): Promise<string> {
  const address = normaliseEmail(email);
  const hashes = ctx.contacts.lookupHashes(address.key);
  const existing = await ctx.store.db
    .selectFrom("holder_oauth_accounts")
    .select("id")
    .where("contact_hash", "in", hashes)
    .executeTakeFirst();
  if (existing !== undefined) return existing.id;
  const id = `acc_${randomBase62(20)}`;
  await ctx.store.db
    .insertInto("holder_oauth_accounts")
    .values({
      id,
      contact_hash: ctx.contacts.hash(address.key),
      email_sealed: ctx.sealer.seal(address.address, accountAad(id)),
      created_at: ctx.clock(),
      consent_version: null,
    })
    .onConflict((oc) => oc.column("contact_hash").doNothing())
    .execute();
  const made = await ctx.store.db
    .selectFrom("holder_oauth_accounts")
    .select("id")
    .where("contact_hash", "in", hashes)
    .executeTakeFirstOrThrow();
  return made.id;
}

/** Keeps the consent text (its version) the person agreed to on the approval page. */
export async function recordAgreedConsent(
  ctx: SignInContext,
  accountId: string,
  consentVersion: string,
): Promise<void> {
  await ctx.store.db
    .updateTable("holder_oauth_accounts")
    .set({ consent_version: consentVersion })
    .where("id", "=", accountId)
    .execute();
}

/** The consent version the person last agreed to, if any (older accounts have none). */
export async function agreedConsentVersion(
  ctx: SignInContext,
  accountId: string,
): Promise<string | undefined> {
  const row = await ctx.store.db
    .selectFrom("holder_oauth_accounts")
    .select("consent_version")
    .where("id", "=", accountId)
    .executeTakeFirst();
  return row?.consent_version ?? undefined;
}

/** The verified address of an account (the contact of intents it publishes); never shown or logged. */
export async function accountEmail(ctx: SignInContext, accountId: string): Promise<string | undefined> {
  const row = await ctx.store.db
    .selectFrom("holder_oauth_accounts")
    .select("email_sealed")
    .where("id", "=", accountId)
    .executeTakeFirst();
  return row === undefined ? undefined : ctx.sealer.openText(row.email_sealed, accountAad(accountId));
}

/** The account whose address has this keyed hash (an intent's `contact_hash`), if one signed in. */
export async function accountByContactHash(
  ctx: SignInContext,
  contactHash: string,
): Promise<string | undefined> {
  const row = await ctx.store.db
    .selectFrom("holder_oauth_accounts")
    .select("id")
    .where("contact_hash", "=", contactHash)
    .executeTakeFirst();
  return row?.id;
}

const escapeHtml = (value: string): string => value.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
