/** The consent page (consent-link rules 2, 3, 5): what it shows, and the person's consent, first come. */
import type { HolderContext } from "../context.js";
import { consentTextByVersion, consentTextFor } from "../i18n/consent-texts.js";
import {
  effectiveStatus,
  intentFromRow,
  manageUrl,
  newPageToken,
  sealContact,
  sendQuietly,
  TAKEN_PREFIX,
} from "../intents/index.js";
import { normaliseEmail } from "../mail/address.js";
import { confirmationMail } from "../mail/templates.js";
import type { Lang } from "../model/languages.js";
import type { ConsentView } from "../model/services.js";
import { HolderError } from "../model/types.js";
import { findConsent, goneMessage, wellFormed } from "./tokens.js";

export async function consentView(
  ctx: HolderContext,
  consentToken: string,
  lang?: Lang,
): Promise<ConsentView> {
  if (!wellFormed(consentToken)) return { state: "unknown" };
  const found = await findConsent(ctx, consentToken);
  if (found === undefined) return { state: "unknown" };
  if (found.taken) return { state: "taken" };
  const now = ctx.clock();
  if (effectiveStatus(found.row, now) !== "awaiting_consent") return { state: "expired" };
  const intent = intentFromRow(found.row, now);
  if (lang === undefined)
    return {
      state: "open",
      intent,
      consentText: ctx.config.consentText,
      consentVersion: ctx.config.consentVersion,
    };
  // The text in the page's language, each language with its own version.
  const text = consentTextFor(ctx.config, lang);
  return {
    state: "open",
    intent,
    consentText: text.text,
    consentVersion: text.version,
    consentLanguage: text.lang,
  };
}

export async function giveConsent(
  ctx: HolderContext,
  consentToken: string,
  input: { email: string; accepted: boolean; consentVersion?: string },
): Promise<{ sentTo: "your e-mail" }> {
  if (!wellFormed(consentToken))
    throw new HolderError("ERR_HOLDER_NOT_FOUND", "this consent link is not valid");
  if (typeof input !== "object" || input === null)
    throw new HolderError("ERR_HOLDER_INVALID", "the form is empty");
  if (input.accepted !== true) {
    throw new HolderError(
      "ERR_HOLDER_INVALID",
      "to keep this intent the holder needs your consent: tick the box to agree",
    );
  }
  // What the intent records: the text (so its language) the person agreed to; only a current one.
  const agreed =
    input.consentVersion === undefined
      ? consentTextFor(ctx.config, "en")
      : consentTextByVersion(ctx.config, input.consentVersion);
  if (agreed === undefined) {
    throw new HolderError(
      "ERR_HOLDER_CONFLICT",
      "the consent text has changed since the page was opened; read it again and agree to it",
    );
  }
  const email = normaliseEmail(input.email);
  const found = await findConsent(ctx, consentToken);
  if (found === undefined) throw new HolderError("ERR_HOLDER_NOT_FOUND", "this consent link is not valid");
  if (found.taken) {
    throw new HolderError(
      "ERR_HOLDER_CONFLICT",
      "consent has already been given for this intent through this link",
    );
  }
  const now = ctx.clock();
  const status = effectiveStatus(found.row, now);
  if (status === "expired" || status === "withdrawn")
    throw new HolderError("ERR_HOLDER_GONE", goneMessage(status));

  const id = found.row.id;
  const confirmToken = newPageToken();
  const manageToken = newPageToken();
  const confirmHash = ctx.codes.hash(confirmToken);
  const confirmExpiresAt = Math.min(now + ctx.config.confirmTtlMs, found.row.valid_until);
  // Rule 3, first-come: the update wins only while the bare hash is still there, so of two
  // concurrent submissions exactly one changes the row (SQLite serialises writers; PostgreSQL
  // re-checks the WHERE after the first commit).
  const taken = await ctx.store.db
    .updateTable("holder_intents")
    .set({
      status: "awaiting_email_confirmation",
      consent_token_hash: TAKEN_PREFIX + found.hash,
      confirm_token_hash: confirmHash,
      manage_token_hash: ctx.codes.hash(manageToken),
      contact_sealed: sealContact(ctx, id, { email: email.address, manageToken }),
      contact_hash: ctx.contacts.hash(email.key),
      consent_version: agreed.version,
      consented_at: now,
      confirm_expires_at: confirmExpiresAt,
      updated_at: now,
    })
    .where("id", "=", id)
    .where("status", "=", "awaiting_consent")
    .where("consent_token_hash", "=", found.hash)
    .executeTakeFirst();
  if (Number(taken.numUpdatedRows) !== 1) {
    throw new HolderError(
      "ERR_HOLDER_CONFLICT",
      "consent has already been given for this intent through this link",
    );
  }
  ctx.log.info({ event: "intent.consent_given", intentId: id }, "consent given; confirmation e-mail follows");

  const mail = confirmationMail({
    holderName: ctx.config.name,
    statement: found.row.statement,
    manageUrl: manageUrl(ctx, manageToken),
    confirmUrl: `${ctx.config.publicUrl}/confirm/${confirmToken}`,
    confirmExpiresAt: new Date(confirmExpiresAt).toISOString(),
    hasHiddenLimit: found.row.hidden_limit_sealed !== null,
    lang: agreed.lang,
  });
  if (!(await sendQuietly(ctx, { to: email.address, ...mail }, "confirmation", id))) {
    // Without the mail nobody can confirm: give the link back so the person can try again.
    await ctx.store.db
      .updateTable("holder_intents")
      .set({
        status: "awaiting_consent",
        consent_token_hash: found.hash,
        confirm_token_hash: null,
        manage_token_hash: null,
        contact_sealed: null,
        contact_hash: null,
        consent_version: null,
        consented_at: null,
        confirm_expires_at: null,
        updated_at: now,
      })
      .where("id", "=", id)
      .where("status", "=", "awaiting_email_confirmation")
      .where("confirm_token_hash", "=", confirmHash)
      .execute();
    throw new HolderError(
      "ERR_HOLDER_UNAVAILABLE",
      "the confirmation e-mail could not be sent just now; nothing was saved, please try again in a few minutes",
    );
  }
  return { sentTo: "your e-mail" };
}
