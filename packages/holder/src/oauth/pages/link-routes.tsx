/**
 * The link of the sign-in mail:
 *
 *   GET  /signin/:uid/link/:token   a button only (GET never acts)
 *   POST /signin/:uid/link/:token   signs in; the provider continues to consent
 */
import { Hono } from "hono";
import { isTokenShaped } from "../../html/security.js";
import { requestLanguage } from "../../i18n/request-language.js";
import { SIGNIN_PATH } from "../../model/scopes.js";
import { useSignInLink } from "../signin.js";
import type { OAuthPagesDeps, SignInKit } from "./sign-in-kit.js";
import { LinkPage } from "./views.js";

export function linkRoutes(kit: SignInKit, deps: OAuthPagesDeps): Hono {
  const { holderName, guard, render, message, interactionOf, formOk, finish, limit } = kit;
  const routes = new Hono();

  routes.get(`${SIGNIN_PATH}/:uid/link/:token`, async (c) => {
    const token = c.req.param("token");
    if (!isTokenShaped(token)) return message(c, 404, "unknownLinkTitle", "unknown");
    const interaction = await interactionOf(c);
    if (interaction instanceof Response) return interaction;
    const csrf = guard.issue(c);
    return render(
      c,
      200,
      <LinkPage
        holderName={holderName}
        action={`${SIGNIN_PATH}/${interaction.uid}/link/${token}`}
        csrf={csrf}
        lang={requestLanguage(c)}
        langSwitch
      />,
    );
  });

  routes.post(`${SIGNIN_PATH}/:uid/link/:token`, limit, async (c) => {
    const token = c.req.param("token");
    if (!isTokenShaped(token)) return message(c, 404, "unknownLinkTitle", "unknown");
    const interaction = await interactionOf(c);
    if (interaction instanceof Response) return interaction;
    const fields = await formOk(c);
    if (fields instanceof Response) return fields;
    const accountId = await useSignInLink(deps.signIn, interaction.uid, token);
    if (accountId === undefined) {
      return message(c, 410, "linkGoneTitle", "linkGone");
    }
    return finish(c, { login: { accountId } });
  });
  return routes;
}
