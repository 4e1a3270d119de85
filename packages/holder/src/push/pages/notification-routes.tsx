/**
 * The push profile's pages: the person allows or stops an agent's subscription (§6 rule 3).
 *
 *   POST /manage/:token/notifications/:id/(allow|stop)   from the manage page, one action each
 *   GET  /notifications/:token                          the approval link of the e-mail
 *   POST /notifications/:token/(allow|stop)
 */
import { type Context, Hono } from "hono";
import type { PageKit } from "../../html/page-kit.js";
import type { ConsentService } from "../../model/services.js";
import type { PushService } from "../service.js";
import { NotificationApprovalPage } from "./views.js";

/** A subscription id in a page URL. */
const SUBSCRIPTION_ID = /^sub_[A-Za-z0-9]{16,64}$/;

export function notificationRoutes(kit: PageKit, deps: { consent: ConsentService; push: PushService }): Hono {
  const { consent, push } = deps;
  const { holderName, langOf, t } = kit;
  const routes = new Hono();

  const notificationGone = (c: Context) =>
    kit.message(c, 410, t(c).messages.notificationsGoneTitle, t(c).messages.notificationsGone);

  routes.post(
    "/manage/:token/notifications/:id/:action{allow|stop}",
    kit.tooLarge,
    kit.tokenForm(
      notificationGone,
      async (c, token) => {
        const id = c.req.param("id") ?? "";
        const { intent } = await consent.manageView(token);
        if (c.req.param("action") === "allow") await push.approve(intent.id, id);
        else await push.revoke(intent.id, id);
        return c.redirect(`/manage/${token}#notifications`, 303);
      },
      { also: (c) => SUBSCRIPTION_ID.test(c.req.param("id") ?? "") },
    ),
  );
  routes.all("/manage/:token/notifications/:id/:action", kit.methodNotAllowed("POST"));

  const approvalPage = async (c: Context, token: string, status: number, done?: "allowed" | "stopped") => {
    const view = await push.approvalView(token);
    return kit.render(
      c,
      status,
      <NotificationApprovalPage
        holderName={holderName}
        statement={view.statement}
        receipt={view.receipt}
        allowAction={`/notifications/${token}/allow`}
        stopAction={`/notifications/${token}/stop`}
        csrf={kit.guard.issue(c)}
        {...(done === undefined ? {} : { done })}
        lang={langOf(c)}
        langSwitch={kit.switchable(c)}
      />,
    );
  };

  routes.get(
    "/notifications/:token",
    kit.tokenPage(notificationGone, (c, token) => approvalPage(c, token, 200)),
  );
  routes.all("/notifications/:token", kit.methodNotAllowed("GET, HEAD"));

  routes.post(
    "/notifications/:token/:action{allow|stop}",
    kit.tooLarge,
    kit.tokenForm(notificationGone, async (c, token) => {
      const view = await push.approvalView(token);
      const allow = c.req.param("action") === "allow";
      if (allow) await push.approve(view.intentId, view.receipt.id);
      else await push.revoke(view.intentId, view.receipt.id);
      return await approvalPage(c, token, 200, allow ? "allowed" : "stopped");
    }),
  );
  routes.all("/notifications/:token/:action", kit.methodNotAllowed("POST"));
  return routes;
}
