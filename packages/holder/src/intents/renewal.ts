/**
 * Renewing validUntil "requires the buyer's fresh action" (binding, intent_update_intent).
 * The person renews on the manage page; an assistant the person signed in to cannot
 * renew, but it can offer the renewal to the person: the holder mails them the manage page with
 * the asked date filled in, and nothing changes until they press Renew there.
 */
import { consentLanguage } from "../i18n/consent-texts.js";
import { formatDay } from "../i18n/format.js";
import { mailWordsFor } from "../i18n/mail-words.js";
import { listUnsubscribeHeaders } from "../mail/list-unsubscribe.js";
import { quoteText } from "../model/quoting.js";
import { SCOPE_MANAGE } from "../model/scopes.js";
import type { RenewalOffer } from "../model/services.js";
import { HolderError, type Principal } from "../model/types.js";
import { authorize } from "./access.js";
import type { Intents } from "./context.js";
import { effectiveStatus, type IntentRecord, loadIntentRow } from "./rows.js";
import { manageUrl, openContact } from "./sealed.js";
import { parseIsoInstant } from "./validate.js";

/**
 * The end a renewal may set, or a HolderError: in the future, at most the holder's longest
 * validity from now, only while the intent is active. One rule for the manage page and for an
 * assistant's offer. `name` is how the refusal names the value (the page's or the tool's word).
 */
export function renewalEnd(
  ctx: Intents["ctx"],
  row: IntentRecord,
  validUntil: unknown,
  name: string,
): number {
  const now = ctx.clock();
  const until = parseIsoInstant(validUntil, "validUntil");
  if (until <= now) throw new HolderError("ERR_HOLDER_INVALID", `${name} must be in the future`);
  const longest = now + ctx.config.maxValidityMs;
  if (until > longest) {
    throw new HolderError(
      "ERR_HOLDER_INVALID",
      `${name} can be at most ${Math.floor(ctx.config.maxValidityMs / 86_400_000)} days from today`,
    );
  }
  if (effectiveStatus(row, now) !== "active") {
    throw new HolderError(
      "ERR_HOLDER_GONE",
      "only an active request can be renewed; this one has ended or is not confirmed yet",
    );
  }
  return until;
}

/** The manage page's renewal, the date filled in (the page keeps the end of that day, UTC). */
export const renewalUrl = (manage: string, until: number): string =>
  `${manage}?renew=${new Date(until).toISOString().slice(0, 10)}#renew`;

/** A signed-in assistant (scope intents:manage, the intent's owner) offers the person a renewal. */
export async function offerRenewal(
  intents: Intents,
  principal: Principal,
  id: string,
  validUntil: unknown,
): Promise<RenewalOffer> {
  const { ctx, options } = intents;
  if (typeof principal === "object" && principal !== null && principal.kind === "intent-code") {
    throw new HolderError(
      "ERR_HOLDER_FORBIDDEN",
      "an intentCode cannot renew an intent (consent-link rule 4); the person renews it from the manage link in the holder's e-mails",
    );
  }
  const intentId = await authorize(intents, principal, id, SCOPE_MANAGE);
  const row = await loadIntentRow(ctx, intentId);
  const until = renewalEnd(ctx, row, validUntil, "validUntil");
  if (row.contact_sealed === null) {
    throw new HolderError("ERR_HOLDER_GONE", "this intent has no verified address to offer the renewal to");
  }
  // The person's mailbox is not the assistant's to fill: a few offers per intent per hour.
  const verdict = await options.allowRenewalOffer?.(intentId);
  if (verdict !== undefined && !verdict.ok) {
    throw new HolderError(
      "ERR_HOLDER_RATE_LIMITED",
      `the person was offered a renewal just now; try again in ${Math.max(1, Math.ceil(verdict.retryAfterSeconds / 60))} minutes${verdict.hint === undefined ? "" : `. ${verdict.hint}`}`,
    );
  }
  const contact = openContact(ctx, intentId, row.contact_sealed);
  const manage = manageUrl(ctx, contact.manageToken);
  // The person's language: that of the consent text recorded with the intent.
  const lang = consentLanguage(ctx.config, row.consent_version);
  const words = mailWordsFor(lang).renewalOffer;
  const day = formatDay(until, lang);
  const text = [
    words.asks(ctx.config.name, day),
    "",
    quoteText(row.statement)
      .split("\n")
      .map((line) => `> ${line}`)
      .join("\n"),
    "",
    words.endsOn(formatDay(Number(row.valid_until), lang)),
    words.howTo(renewalUrl(manage, until)),
  ].join("\n");
  try {
    await ctx.mailer.send({
      to: contact.email,
      subject: words.subject(day, ctx.config.name),
      text,
      html: `<div lang="${lang}">${text
        .split("\n")
        .map((line) => `<p>${line.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`)}</p>`)
        .join("")}</div>`,
      // Every mail about an intent stops its notifications in one click.
      headers: listUnsubscribeHeaders(manage),
    });
  } catch {
    ctx.log.warn({ event: "mail.failed", kind: "renewal-offer", intentId }, "an e-mail could not be sent");
    throw new HolderError(
      "ERR_HOLDER_UNAVAILABLE",
      "the offer could not be mailed to the person; try again later",
    );
  }
  ctx.log.info({ event: "intent.renewal_offered", intentId }, "a renewal was offered to the person");
  return { validUntil: new Date(until).toISOString(), status: "offered-to-person" };
}
