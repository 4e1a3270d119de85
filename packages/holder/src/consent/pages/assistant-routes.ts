/**
 * The OAuth access the person gave an assistant, revoked in one action from the manage page:
 *
 *   POST /manage/:token/assistants/:grant/revoke
 */
import { Hono } from "hono";
import type { PageKit } from "../../html/page-kit.js";
import type { ConsentService } from "../../model/services.js";
import type { IntentAssistants } from "../../oauth/owners.js";
import { manageGone } from "./manage-routes.js";

/** An OAuth grant id (oidc-provider's, URL-safe) in a page URL. */
const GRANT_ID = /^[A-Za-z0-9_-]{10,64}$/;

export function assistantRoutes(
  kit: PageKit,
  deps: { consent: ConsentService; assistants: IntentAssistants },
): Hono {
  const { consent, assistants } = deps;
  const routes = new Hono();
  routes.post(
    "/manage/:token/assistants/:grant/revoke",
    kit.tooLarge,
    kit.tokenForm(
      manageGone(kit),
      async (c, token) => {
        const { intent } = await consent.manageView(token);
        if (!(await assistants.revoke(intent.id, c.req.param("grant") ?? ""))) return kit.unknownLink(c);
        return c.redirect(`/manage/${token}#assistants`, 303);
      },
      { also: (c) => GRANT_ID.test(c.req.param("grant") ?? "") },
    ),
  );
  routes.all("/manage/:token/assistants/:grant/revoke", kit.methodNotAllowed("POST"));
  return routes;
}
