/**
 * Sign-in and consent for assistants that sign the person in (OAuth): the holder's own
 * pages for oidc-provider's interactions.
 *
 *   GET  /signin/:uid                  e-mail form (who is signing in), or the consent page
 *   POST /signin/:uid/email            mails a one-time sign-in link (oauth/signin.ts)
 *   GET  /signin/:uid/link/:token      the link of the mail: a button only (GET never acts)
 *   POST /signin/:uid/link/:token      signs in; the provider continues to consent
 *   POST /signin/:uid/approve          grants what the assistant asked for, back to the assistant
 *   POST /signin/:uid/deny             refuses; the assistant gets access_denied
 *
 * The consent page shows the assistant's name, where it will be sent back (redirect host), what
 * each scope lets it do and the holder's consent text (the same text as the consent-link page).
 * Forms are guarded as the other pages are (html/security.ts). The interaction is found through
 * oidc-provider's own cookie, so these pages work only under the holder's Node server (as the
 * provider itself does); without the Node bindings they answer 404.
 *
 * Each group of routes is a Hono app of its own, composed here with `route()`.
 */
import { Hono } from "hono";
import { decisionRoutes } from "./decision-routes.js";
import { linkRoutes } from "./link-routes.js";
import { createSignInKit, type OAuthPagesDeps } from "./sign-in-kit.js";
import { signInRoutes } from "./sign-in-routes.js";

export type { OAuthPagesDeps } from "./sign-in-kit.js";

/** The sign-in pages as one Hono app, to be composed with `app.route("/", oauthPages(deps))`. */
export function oauthPages(deps: OAuthPagesDeps): Hono {
  const kit = createSignInKit(deps);
  return new Hono()
    .route("/", signInRoutes(kit, deps))
    .route("/", linkRoutes(kit, deps))
    .route("/", decisionRoutes(kit, deps));
}
