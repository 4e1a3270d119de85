/** Sealed values of an intent (the hidden limit, the contact), each bound to the intent's id. */
import type { HolderContext } from "../context.js";
import type { Currency } from "../model/types.js";

export const hiddenLimitAad = (intentId: string): string => `holder.intent.hidden_limit:${intentId}`;
export const contactAad = (intentId: string): string => `holder.intent.contact:${intentId}`;

/** The sealed hidden limit: the amount and its currency (the budget's, else the country's). */
export interface HiddenLimit {
  amount: number;
  currency: Currency;
}

export function sealHiddenLimit(
  ctx: Pick<HolderContext, "sealer">,
  intentId: string,
  limit: HiddenLimit,
): string {
  return ctx.sealer.seal(
    JSON.stringify({ amount: limit.amount, currency: limit.currency }),
    hiddenLimitAad(intentId),
  );
}

/** For the matching engine only: opens `hidden_limit_sealed`. Never put the result in a result, log or mail. */
export function openHiddenLimit(
  ctx: Pick<HolderContext, "sealer">,
  intentId: string,
  sealed: string,
): HiddenLimit {
  const value = JSON.parse(ctx.sealer.openText(sealed, hiddenLimitAad(intentId))) as HiddenLimit;
  return { amount: value.amount, currency: value.currency };
}

/**
 * What `contact_sealed` holds: the person's e-mail and the manage token of the links in their
 * mails. The token is also stored as a keyed hash (for lookups); this sealed copy exists only so
 * later mails (digests, the withdrawn notice) can carry the same manage link. Both are erased when
 * the intent ends.
 */
export interface SealedContact {
  email: string;
  manageToken: string;
}

export function sealContact(
  ctx: Pick<HolderContext, "sealer">,
  intentId: string,
  contact: SealedContact,
): string {
  return ctx.sealer.seal(
    JSON.stringify({ email: contact.email, manageToken: contact.manageToken }),
    contactAad(intentId),
  );
}

export function openContact(
  ctx: Pick<HolderContext, "sealer">,
  intentId: string,
  sealed: string,
): SealedContact {
  const value = JSON.parse(ctx.sealer.openText(sealed, contactAad(intentId))) as SealedContact;
  return { email: value.email, manageToken: value.manageToken };
}

export const manageUrl = (ctx: Pick<HolderContext, "config">, token: string): string =>
  `${ctx.config.publicUrl}/manage/${token}`;
