/**
 * The double opt-in:
 *
 *   GET  /confirm/:token   a button only: mail scanners open links, so GET changes nothing
 *   POST /confirm/:token   activates the request
 */
import { type Context, Hono } from "hono";
import type { PageKit } from "../../html/page-kit.js";
import type { ConsentService } from "../../model/services.js";
import { ActivePage, ConfirmPage } from "./views.js";

export function confirmRoutes(
  kit: PageKit,
  deps: { consent: ConsentService; mailboxUrl?: string | undefined },
): Hono {
  const { consent, mailboxUrl } = deps;
  const { holderName, langOf, t } = kit;
  const routes = new Hono();

  const confirmGone = (c: Context) =>
    kit.message(c, 410, t(c).confirm.goneTitle, t(c).confirm.gone, t(c).confirm.goneNext);

  routes.get(
    "/confirm/:token",
    kit.tokenPage(confirmGone, async (c, token) => {
      // A link already used says so first: no button that would only answer "already done".
      const state = await consent.confirmState(token);
      if (state === "confirmed")
        return await kit.message(c, 200, t(c).confirm.usedTitle, t(c).confirm.used, t(c).confirm.usedManage);
      if (state === "ended") return await confirmGone(c);
      // "open", and "unknown" too: the POST answers an unknown link (a GET reveals nothing more).
      return await kit.render(
        c,
        200,
        <ConfirmPage
          holderName={holderName}
          action={`/confirm/${token}`}
          csrf={kit.guard.issue(c)}
          lang={langOf(c)}
          langSwitch={kit.switchable(c)}
        />,
      );
    }),
  );

  routes.post(
    "/confirm/:token",
    kit.tooLarge,
    kit.tokenForm(confirmGone, async (c, token) => {
      const intent = await consent.confirmEmail(token);
      // ConsentService.confirmEmail does not return the manage token, so the page points at the
      // manage link every e-mail carries instead of linking it directly.
      return await kit.render(
        c,
        200,
        <ActivePage
          holderName={holderName}
          intent={intent}
          {...(mailboxUrl ? { mailboxUrl } : {})}
          lang={langOf(c)}
        />,
      );
    }),
  );

  routes.all("/confirm/:token", kit.methodNotAllowed("GET, HEAD, POST"));
  return routes;
}
