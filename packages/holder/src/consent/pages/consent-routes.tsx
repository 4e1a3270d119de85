/**
 * The consent page (consent-link rules 2, 3 and 5):
 *
 *   GET  /consent/:token   the request, the consent text, e-mail and consent checkbox
 *   POST /consent/:token   gives consent (first-come, rule 3) and sends the double opt-in
 */
import type { Context } from "hono";
import { Hono } from "hono";
import type { HolderConfig } from "../../context.js";
import { type PageKit, sentence } from "../../html/page-kit.js";
import { consentTextByVersion } from "../../i18n/consent-texts.js";
import { plural } from "../../i18n/format.js";
import { messagesFor } from "../../i18n/messages/index.js";
import { type HolderLimits, peerAddress } from "../../limits/index.js";
import { normaliseEmail } from "../../mail/address.js";
import { allowRequestedMail, minutesToWait } from "../../mail/request-limits.js";
import { DEFAULT_LANG, type Lang } from "../../model/languages.js";
import type { ConsentService } from "../../model/services.js";
import { HolderError } from "../../model/types.js";
import { consentChoiceField } from "../../push/pages/views.js";
import type { PushService } from "../../push/service.js";
import { CheckEmailPage, type ConsentErrors, ConsentFormPage, type ConsentPageSlots } from "./views.js";

export interface ConsentRoutesDeps {
  consent: ConsentService;
  config: HolderConfig;
  push?: PushService | undefined;
  limits?: HolderLimits | undefined;
  mailboxUrl?: string | undefined;
  slots: ConsentPageSlots;
}

/**
 * Why an address is refused, as a sentence: the service's own (English) words, or in Slovak and
 * Czech one plain sentence with an example.
 */
function emailProblem(email: string, lang: Lang): string | undefined {
  const words = messagesFor(lang).consent.errors;
  if (email === "") return words.emailMissing;
  try {
    normaliseEmail(email);
    return undefined;
  } catch (error) {
    if (!(error instanceof HolderError)) throw error;
    return lang === DEFAULT_LANG ? sentence(error.message) : words.emailInvalid;
  }
}

export function consentRoutes(kit: PageKit, deps: ConsentRoutesDeps): Hono {
  const { consent, config, push, mailboxUrl } = deps;
  const { holderName, langOf } = kit;
  const routes = new Hono();

  const closedConsent = (c: Context, state: "taken" | "expired" | "unknown") =>
    state === "taken" ? kit.usedLink(c) : state === "expired" ? kit.expiredLink(c) : kit.unknownLink(c);

  const consentForm = async (
    c: Context,
    token: string,
    status: number,
    extra: { email?: string; errors?: ConsentErrors } = {},
  ): Promise<Response> => {
    const lang = langOf(c);
    const view = await consent.consentView(token, lang);
    if (view.state !== "open") return closedConsent(c, view.state);
    const notifications = push === undefined ? [] : await push.consentChoices(view.intent.id);
    return kit.render(
      c,
      status,
      <ConsentFormPage
        holderName={holderName}
        intent={view.intent}
        consentText={view.consentText}
        consentVersion={view.consentVersion}
        {...(view.consentLanguage !== undefined && view.consentLanguage !== lang
          ? { consentLanguage: view.consentLanguage }
          : {})}
        action={`/consent/${token}`}
        csrf={kit.guard.issue(c)}
        notifications={notifications}
        slots={deps.slots}
        lang={lang}
        langSwitch={kit.switchable(c)}
        {...extra}
      />,
    );
  };

  /** A confirmation is a mail anyone with the link asks for: the shared limits decide. */
  const mailRefused = async (c: Context, email: string, intentId: string, lang: Lang) => {
    if (deps.limits === undefined) return undefined;
    const verdict = await allowRequestedMail(deps.limits, {
      recipient: email,
      clientKey: deps.limits.clientKey(peerAddress(c.env), c.req.raw.headers),
      interaction: `consent:${intentId}`,
    });
    if (verdict.ok) return undefined;
    const words = messagesFor(lang);
    const wait = plural(minutesToWait(verdict.retryAfterSeconds), words.duration.minutes, lang);
    const refused = await kit.message(
      c,
      429,
      words.messages.mailLimitedTitle,
      words.messages.mailLimited(wait),
      words.messages.limitHint(verdict.limit),
    );
    refused.headers.set("Retry-After", String(verdict.retryAfterSeconds));
    return refused;
  };

  routes.get(
    "/consent/:token",
    kit.tokenPage(kit.usedLink, (c, token) => consentForm(c, token, 200)),
  );

  routes.post(
    "/consent/:token",
    kit.tooLarge,
    kit.tokenForm(kit.usedLink, async (c, token, fields) => {
      // The answer speaks the language of the text the person read (the form says which).
      const lang = consentTextByVersion(config, fields.consentVersion)?.lang ?? langOf(c);
      if (lang !== langOf(c)) {
        kit.setLang(c, lang);
        c.header("Content-Language", lang);
      }
      const view = await consent.consentView(token, lang);
      if (view.state !== "open") return closedConsent(c, view.state);

      const words = messagesFor(lang).consent.errors;
      const email = (fields.email ?? "").trim();
      const errors: ConsentErrors = {};
      if (fields.consentVersion !== view.consentVersion) errors.version = words.version;
      const problem = emailProblem(email, lang);
      if (problem !== undefined) errors.email = problem;
      if (fields.consent !== "yes" || errors.version !== undefined) errors.consent = words.consent;
      if (errors.email !== undefined || errors.consent !== undefined || errors.version !== undefined) {
        const status = errors.version !== undefined ? 409 : 400;
        return await consentForm(c, token, status, { email: email.slice(0, 254), errors });
      }
      const refused = await mailRefused(c, email, view.intent.id, lang);
      if (refused !== undefined) return refused;
      try {
        // The record names the text, and so the language, the person agreed to.
        await consent.giveConsent(token, { email, accepted: true, consentVersion: view.consentVersion });
        if (push !== undefined) {
          // Push §6 rule 3: only boxes the person ticked; confirming decides the rest.
          const choices = await push.consentChoices(view.intent.id);
          const chosen = choices.filter((choice) => fields[consentChoiceField(choice.id)] === "yes");
          await push.chooseOnConsent(
            view.intent.id,
            chosen.map((choice) => choice.id),
          );
        }
      } catch (error) {
        if (error instanceof HolderError && error.code === "ERR_HOLDER_INVALID") {
          return await consentForm(c, token, 400, {
            email,
            errors: { email: lang === DEFAULT_LANG ? sentence(error.message) : words.emailInvalid },
          });
        }
        throw error;
      }
      return await kit.render(
        c,
        200,
        <CheckEmailPage
          holderName={holderName}
          confirmTtlMs={config.confirmTtlMs}
          {...(mailboxUrl ? { mailboxUrl } : {})}
          lang={lang}
        />,
      );
    }),
  );

  routes.all("/consent/:token", kit.methodNotAllowed("GET, HEAD, POST"));
  return routes;
}
