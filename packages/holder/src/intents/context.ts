/** What every intent operation shares: the holder's context, the hooks and the OAuth seams. */
import type { Transaction } from "@doorbell/store";
import type { HolderContext } from "../context.js";
import type { Lang } from "../model/languages.js";
import type { HolderTables } from "../model/tables.js";
import type { Intent, Principal } from "../model/types.js";
import type { IntentHooks } from "./hooks.js";

export type OAuthPrincipal = Extract<Principal, { kind: "oauth" }>;

export interface IntentServiceOptions {
  /**
   * Whether an OAuth principal may act on an intent (the intent was published by that
   * person through that client; see oauth/owners.ts). Without it every OAuth principal is refused.
   */
  oauthAccess?: (principal: OAuthPrincipal, intentId: string) => boolean | Promise<boolean>;
  /**
   * Publishing for a signed-in person: their verified address (the intent's contact)
   * and recording who owns the new intent, in the same transaction. Without it an OAuth principal
   * cannot publish.
   */
  oauthPublish?: {
    /** The person's address and, when they agreed to one, the consent version (its language). */
    contactOf(
      principal: OAuthPrincipal,
    ): Promise<{ email: string; contactHash: string; consentVersion?: string } | undefined>;
    recordOwner(trx: Transaction<HolderTables>, intentId: string, principal: OAuthPrincipal): Promise<void>;
    /** After commit: tell the person (their manage link); failures are logged, never undo. */
    published?(intent: Intent, email: string, manageUrl: string, lang: Lang): Promise<void>;
  };
  /**
   * Whether one more renewal offer may be mailed for this intent now (a shared
   * limit); without it every offer is mailed.
   */
  allowRenewalOffer?: (intentId: string) => Promise<RenewalOfferVerdict>;
}

/** A refusal's `hint` names the limit and how an operator changes it. */
export type RenewalOfferVerdict = { ok: true } | { ok: false; retryAfterSeconds: number; hint?: string };

export interface Intents {
  readonly ctx: HolderContext;
  readonly hooks: IntentHooks;
  readonly options: IntentServiceOptions;
}
