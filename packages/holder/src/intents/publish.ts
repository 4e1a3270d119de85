/** Publishing: a draft awaiting consent (consent-link rule 1), or active at once for a signed-in person. */

import { consentLanguage } from "../i18n/consent-texts.js";
import { SCOPE_MANAGE } from "../model/scopes.js";
import { FRESH_MATCHING_STATE } from "../model/tables.js";
import type { PublishInput, PublishResult } from "../model/types.js";
import { HolderError } from "../model/types.js";
import { requireScope } from "./access.js";
import { newIntentCode, newIntentId, newPageToken } from "./codes.js";
import type { Intents, OAuthPrincipal } from "./context.js";
import { runHook } from "./hooks.js";
import { type IntentRecord, intentFromRow, publishedColumns } from "./rows.js";
import { manageUrl, sealContact } from "./sealed.js";
import { type ValidPublish, validatePublish } from "./validate.js";

export async function publish(intents: Intents, input: PublishInput): Promise<PublishResult> {
  const { ctx } = intents;
  const draftTtl = Math.min(ctx.config.draftTtlMs, 24 * 60 * 60 * 1000);
  const now = ctx.clock();
  const valid = validatePublish(input, now, ctx.config);
  const id = newIntentId();
  const intentCode = newIntentCode();
  const consentToken = newPageToken();
  const row: IntentRecord = {
    id,
    code_hash: ctx.codes.hash(intentCode),
    consent_token_hash: ctx.codes.hash(consentToken),
    confirm_token_hash: null,
    manage_token_hash: null,
    status: "awaiting_consent",
    ...publishedColumns(ctx, id, valid),
    contact_sealed: null,
    contact_hash: null,
    consent_version: null,
    // Rule 1: at most 24 h, and never past the intent's own end.
    draft_expires_at: Math.min(now + draftTtl, valid.validUntil),
    confirm_expires_at: null,
    created_at: now,
    updated_at: now,
    consented_at: null,
    confirmed_at: null,
    ended_at: null,
    ...FRESH_MATCHING_STATE,
  };
  await ctx.store.db.insertInto("holder_intents").values(row).execute();
  ctx.log.info(
    { event: "intent.published", intentId: id, visibility: valid.visibility },
    "draft intent published",
  );
  return {
    intent: intentFromRow(row, now),
    intentCode,
    consentUrl: `${ctx.config.publicUrl}/consent/${consentToken}`,
  };
}

/**
 * An intent published with a token is active at once. The person signed in by an
 * e-mail link (a verified channel) and approved this assistant with the holder's consent text on
 * the holder's page, which stands for the consent page and the double opt-in of consent-link.
 * The contact is their sign-in address, sealed; the result carries no consent link. An
 * intentCode is still made (every intent has one) and returned once, as with a draft.
 */
export async function publishSignedIn(
  intents: Intents,
  principal: OAuthPrincipal,
  valid: ValidPublish,
  now: number,
): Promise<Omit<PublishResult, "consentUrl">> {
  const { ctx, hooks, options } = intents;
  requireScope(principal, SCOPE_MANAGE);
  const ownership = options.oauthPublish;
  const contact = ownership === undefined ? undefined : await ownership.contactOf(principal);
  if (ownership === undefined || contact === undefined) {
    throw new HolderError(
      "ERR_HOLDER_FORBIDDEN",
      "this sign-in has no e-mail address verified by this holder; publish without a token to get a consent link",
    );
  }
  const id = newIntentId();
  const intentCode = newIntentCode();
  const manageToken = newPageToken();
  const row: IntentRecord = {
    id,
    code_hash: ctx.codes.hash(intentCode),
    consent_token_hash: null,
    confirm_token_hash: null,
    manage_token_hash: ctx.codes.hash(manageToken),
    status: "active",
    ...publishedColumns(ctx, id, valid),
    contact_sealed: sealContact(ctx, id, { email: contact.email, manageToken }),
    contact_hash: contact.contactHash,
    // The text the person agreed to when they allowed the assistant (its language), else today's.
    consent_version: contact.consentVersion ?? ctx.config.consentVersion,
    draft_expires_at: null,
    confirm_expires_at: null,
    created_at: now,
    updated_at: now,
    consented_at: now,
    confirmed_at: now,
    ended_at: null,
    ...FRESH_MATCHING_STATE,
    matching_since: now,
  };
  await ctx.store.transaction(async (trx) => {
    await trx.insertInto("holder_intents").values(row).execute();
    await ownership.recordOwner(trx, id, principal);
  });
  ctx.log.info(
    { event: "intent.published", intentId: id, visibility: valid.visibility, signedIn: true },
    "intent published",
  );
  const intent = intentFromRow(row, now);
  await runHook(ctx, "onActivated", id, () => hooks.onActivated(id));
  if (ownership.published !== undefined) {
    const published = ownership.published;
    const lang = consentLanguage(ctx.config, row.consent_version);
    await runHook(ctx, "published", id, () =>
      published(intent, contact.email, manageUrl(ctx, manageToken), lang),
    );
  }
  return { intent, intentCode };
}
