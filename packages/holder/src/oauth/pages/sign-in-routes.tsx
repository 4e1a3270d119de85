/**
 * Who is signing in, and what they allow:
 *
 *   GET  /signin/:uid         e-mail form (who is signing in), or the consent page
 *   POST /signin/:uid/email   mails a one-time sign-in link (oauth/signin.ts)
 */
import { Hono } from "hono";
import { consentTextFor } from "../../i18n/consent-texts.js";
import { messagesFor } from "../../i18n/messages/index.js";
import { requestLanguage } from "../../i18n/request-language.js";
import { peerAddress } from "../../limits/index.js";
import { allowRequestedMail } from "../../mail/request-limits.js";
import { DEFAULT_LANG } from "../../model/languages.js";
import { SIGNIN_PATH } from "../../model/scopes.js";
import { HolderError } from "../../model/types.js";
import { sendSignInLink } from "../signin.js";
import { cspWithFormTarget, type OAuthPagesDeps, type SignInKit } from "./sign-in-kit.js";
import { ConsentPage, SignInPage } from "./views.js";

export function signInRoutes(kit: SignInKit, deps: OAuthPagesDeps): Hono {
  const { holderName, guard, render, message, mailLimited, interactionOf, clientOf, formOk, limit } = kit;
  const { config } = deps;
  const routes = new Hono();

  routes.get(`${SIGNIN_PATH}/:uid`, async (c) => {
    const interaction = await interactionOf(c);
    if (interaction instanceof Response) return interaction;
    const client = await clientOf(interaction);
    const csrf = guard.issue(c);
    const base = `${SIGNIN_PATH}/${interaction.uid}`;
    if (interaction.prompt.name === "login") {
      return render(
        c,
        200,
        <SignInPage
          holderName={holderName}
          clientName={client.name}
          action={`${base}/email`}
          csrf={csrf}
          lang={requestLanguage(c)}
          langSwitch
        />,
      );
    }
    const missing = interaction.prompt.details.missingResourceScopes as Record<string, string[]> | undefined;
    const scopes = missing?.[deps.resource] ?? [];
    const lang = requestLanguage(c);
    const consentText = consentTextFor(config, lang);
    return render(
      c,
      200,
      <ConsentPage
        holderName={holderName}
        clientName={client.name}
        redirectHost={client.redirectHost}
        scopes={scopes}
        consentText={consentText.text}
        consentVersion={consentText.version}
        consentLanguage={consentText.lang}
        lang={lang}
        langSwitch
        approve={`${base}/approve`}
        deny={`${base}/deny`}
        csrf={csrf}
      />,
      cspWithFormTarget(String(interaction.params.redirect_uri ?? "")),
    );
  });

  routes.post(`${SIGNIN_PATH}/:uid/email`, limit, async (c) => {
    const interaction = await interactionOf(c);
    if (interaction instanceof Response) return interaction;
    const fields = await formOk(c);
    if (fields instanceof Response) return fields;
    const client = await clientOf(interaction);
    if (deps.limits !== undefined) {
      // A sign-in link is a mail anyone may ask for.
      const verdict = await allowRequestedMail(deps.limits, {
        recipient: fields.email ?? "",
        clientKey: deps.limits.clientKey(peerAddress(c.env), c.req.raw.headers),
        interaction: `signin:${interaction.uid}`,
      });
      if (!verdict.ok) {
        const refused = await mailLimited(c, verdict.limit, verdict.retryAfterSeconds);
        refused.headers.set("Retry-After", String(verdict.retryAfterSeconds));
        return refused;
      }
    }
    const lang = requestLanguage(c);
    try {
      await sendSignInLink(deps.signIn, interaction.uid, fields.email ?? "", client.name, lang);
    } catch (error) {
      if (!(error instanceof HolderError)) throw error;
      const csrf = guard.issue(c);
      // The service's reason is English; the other languages say the consent page's sentence.
      const problem = lang === DEFAULT_LANG ? error.message : messagesFor(lang).consent.errors.emailInvalid;
      return render(
        c,
        400,
        <SignInPage
          holderName={holderName}
          clientName={client.name}
          action={`${SIGNIN_PATH}/${interaction.uid}/email`}
          csrf={csrf}
          error={problem}
          lang={lang}
        />,
      );
    }
    return message(c, 200, "sentTitle", "sent");
  });
  return routes;
}
