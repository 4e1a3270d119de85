/**
 * The manage page: see the request and its offers, withdraw in one action, renew.
 *
 *   GET  /manage/:token            the request, its status and its offers, with a withdraw form
 *   POST /manage/:token/withdraw   withdraws at once (one action)
 *   POST /manage/:token/renew      renews validUntil (the person's fresh action)
 */
import { type Context, Hono } from "hono";
import type { HolderConfig } from "../../context.js";
import type { PageKit } from "../../html/page-kit.js";
import type { ConsentService } from "../../model/services.js";
import type { IntentAssistants } from "../../oauth/owners.js";
import type { PushService } from "../../push/service.js";
import { type ConsentPageSlots, ManagePage, WithdrawnPage } from "./views.js";

export interface ManageRoutesDeps {
  consent: ConsentService;
  config: HolderConfig;
  push?: PushService | undefined;
  assistants?: IntentAssistants | undefined;
  slots: ConsentPageSlots;
}

/** The manage page's answer to a link that no longer works (shared by its actions). */
export const manageGone = (kit: PageKit) => (c: Context) =>
  kit.message(c, 410, kit.t(c).messages.manageGoneTitle, kit.t(c).messages.manageGone);

export function manageRoutes(kit: PageKit, deps: ManageRoutesDeps): Hono {
  const { consent, config, push, assistants } = deps;
  const { holderName, langOf } = kit;
  const gone = manageGone(kit);
  const routes = new Hono();

  routes.get(
    "/manage/:token",
    kit.tokenPage(gone, async (c, token) => {
      const { intent, matches } = await consent.manageView(token);
      const notifications = push === undefined ? [] : await push.receipts(intent.id);
      const signedIn = assistants === undefined ? [] : await assistants.list(intent.id);
      return await kit.render(
        c,
        200,
        <ManagePage
          holderName={holderName}
          intent={intent}
          matches={matches}
          withdrawAction={`/manage/${token}/withdraw`}
          {...(consent.renewByManageToken === undefined
            ? {}
            : {
                renewAction: `/manage/${token}/renew`,
                renewMax: new Date(Date.now() + config.maxValidityMs).toISOString().slice(0, 10),
                // An assistant's renewal offer links here with its date.
                ...(/^\d{4}-\d{2}-\d{2}$/.test(c.req.query("renew") ?? "")
                  ? { renewValue: c.req.query("renew") as string }
                  : {}),
              })}
          csrf={kit.guard.issue(c)}
          notifications={notifications}
          {...(push === undefined
            ? {}
            : {
                notificationAction: (receipt, action) =>
                  `/manage/${token}/notifications/${receipt.id}/${action}`,
              })}
          {...(assistants === undefined
            ? {}
            : {
                assistants: signedIn,
                assistantAction: (assistant) => `/manage/${token}/assistants/${assistant.grantId}/revoke`,
              })}
          slots={deps.slots}
          lang={langOf(c)}
          langSwitch={kit.switchable(c)}
        />,
      );
    }),
  );

  routes.all("/manage/:token", kit.methodNotAllowed("GET, HEAD"));

  routes.post(
    "/manage/:token/withdraw",
    kit.tooLarge,
    kit.tokenForm(gone, async (c, token) => {
      const intent = await consent.withdrawByManageToken(token);
      return await kit.render(
        c,
        200,
        <WithdrawnPage
          holderName={holderName}
          intent={intent}
          manageUrl={`/manage/${token}`}
          lang={langOf(c)}
        />,
      );
    }),
  );

  routes.all("/manage/:token/withdraw", kit.methodNotAllowed("POST"));

  // Renewing validUntil needs the person's fresh action (push profile): this form, nothing else.
  routes.post(
    "/manage/:token/renew",
    kit.tooLarge,
    kit.tokenForm(gone, async (c, token, fields) => {
      if (consent.renewByManageToken === undefined) return kit.unknownLink(c);
      await consent.renewByManageToken(token, fields.validUntil ?? "");
      return c.redirect(`/manage/${token}#renew`, 303);
    }),
  );

  routes.all("/manage/:token/renew", kit.methodNotAllowed("POST"));
  return routes;
}
