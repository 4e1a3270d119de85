/**
 * The person's answer on the consent page:
 *
 *   POST /signin/:uid/approve   grants what the assistant asked for, back to the assistant
 *   POST /signin/:uid/deny      refuses; the assistant gets access_denied
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { Hono } from "hono";
import { consentTextByVersion } from "../../i18n/consent-texts.js";
import { SIGNIN_PATH } from "../../model/scopes.js";
import { recordAgreedConsent } from "../signin.js";
import type { NodeBindings, OAuthPagesDeps, SignInKit } from "./sign-in-kit.js";

export function decisionRoutes(kit: SignInKit, deps: OAuthPagesDeps): Hono {
  const { message, interactionOf, formOk, finish, limit } = kit;
  const { provider, config } = deps;
  const routes = new Hono();

  routes.post(`${SIGNIN_PATH}/:uid/approve`, limit, async (c) => {
    const interaction = await interactionOf(c);
    if (interaction instanceof Response) return interaction;
    const fields = await formOk(c);
    if (fields instanceof Response) return fields;
    const accountId = interaction.session?.accountId;
    if (interaction.prompt.name !== "consent" || accountId === undefined) {
      return message(c, 409, "signInFirstTitle", "signInFirst");
    }
    // Any language's current text will do: each has its own version.
    const agreed = consentTextByVersion(config, fields.consentVersion);
    if (agreed === undefined) {
      return message(c, 409, "consentChangedTitle", "consentChanged");
    }
    // The text the person agreed to, and so the language of the mails about what it publishes.
    await recordAgreedConsent(deps.signIn, accountId, agreed.version);
    const clientId = String(interaction.params.client_id);
    const grant =
      (interaction.grantId === undefined ? undefined : await provider.Grant.find(interaction.grantId)) ??
      new provider.Grant({ accountId, clientId });
    const details = interaction.prompt.details;
    const oidcScopes = details.missingOIDCScope as string[] | undefined;
    if (oidcScopes !== undefined && oidcScopes.length > 0) grant.addOIDCScope(oidcScopes.join(" "));
    const resourceScopes = details.missingResourceScopes as Record<string, string[]> | undefined;
    for (const [indicator, scopes] of Object.entries(resourceScopes ?? {})) {
      if (indicator === deps.resource) grant.addResourceScope(indicator, scopes.join(" "));
    }
    const grantId = await grant.save();
    return finish(c, { consent: { grantId } });
  });

  routes.post(`${SIGNIN_PATH}/:uid/deny`, limit, async (c) => {
    const interaction = await interactionOf(c);
    if (interaction instanceof Response) return interaction;
    const fields = await formOk(c);
    if (fields instanceof Response) return fields;
    const env = c.env as NodeBindings;
    const returnTo = await provider.interactionResult(
      env.incoming as IncomingMessage,
      env.outgoing as ServerResponse,
      { error: "access_denied", error_description: "the person did not allow this assistant" },
      { mergeWithLastSubmission: false },
    );
    return new Response(null, { status: 303, headers: { location: returnTo, "cache-control": "no-store" } });
  });
  return routes;
}
