/**
 * The person's side of the consent-link profile, behind the holder's own pages: the consent page
 * (rules 2, 3, 5), the double opt-in confirmation, the manage page of every e-mail, and the
 * match digest to the verified channel. Tokens arrive in clear from a URL and are only ever
 * compared as keyed hashes; the e-mail address is sealed the moment it arrives. Each operation
 * lives in its own module under consent/; this one binds them into the service.
 */
import type { HolderContext } from "../context.js";
import { type IntentHooks, noIntentHooks } from "../intents/index.js";
import type { ConsentService } from "../model/services.js";
import { confirmEmail } from "./confirm.js";
import { confirmState } from "./confirm-state.js";
import { sendDueDigests, sendMatchDigest } from "./digest.js";
import { consentView, giveConsent } from "./give-consent.js";
import { manageView, withdrawByManageToken } from "./manage.js";
import { renewByManageToken } from "./renew.js";

export { offerFromRow } from "../model/offer-rows.js";
export { DIGEST_LIST_MAX, REPLY_COALESCE_MS } from "./digest.js";
export { DIGEST_WINDOW_MS } from "./digest-window.js";
export { MANAGE_MATCHES_MAX } from "./manage.js";

/** The consent service plus what the matching engine calls when it has recorded matches. */
export interface HolderConsentService extends ConsentService {
  /**
   * E-mails the person the intent's matches after its digest's watermark, newest first, and moves
   * the watermark past them. Only for an active intent with a verified channel, and at most once
   * per digest window: within it the intent is marked due instead. Returns how many
   * matches the mail carried (0: nothing to send, held for the window, or the mail failed and the
   * matches wait for the next one).
   */
  sendMatchDigest(intentId: string): Promise<number>;
  /**
   * Mails the digests that waited: for the end of their window, or for more seller
   * replies. The holder runs it every minute; once `signal` aborts (this process no longer leads
   * the background work), no further digest is started.
   */
  sendDueDigests(signal?: AbortSignal): Promise<number>;
}

export function createConsentService(
  ctx: HolderContext,
  hooks: IntentHooks = noIntentHooks,
): HolderConsentService {
  return {
    consentView: (token, lang) => consentView(ctx, token, lang),
    giveConsent: (token, input) => giveConsent(ctx, token, input),
    confirmEmail: (token) => confirmEmail(ctx, hooks, token),
    confirmState: (token) => confirmState(ctx, token),
    manageView: (token) => manageView(ctx, token),
    withdrawByManageToken: (token) => withdrawByManageToken(ctx, hooks, token),
    renewByManageToken: (token, validUntil) => renewByManageToken(ctx, hooks, token, validUntil),
    sendMatchDigest: (intentId) => sendMatchDigest(ctx, intentId),
    sendDueDigests: (signal) => sendDueDigests(ctx, signal),
  };
}
