/**
 * The local mailbox (development): the mails a holder without SMTP would have sent.
 *
 *   GET  <mailboxPath>       the list
 *   GET  <mailboxPath>/:id   one mail
 */
import { Hono } from "hono";
import type { PageKit } from "../../html/page-kit.js";
import type { LocalMailbox } from "../../mail/local-mailbox.js";
import { MailboxListPage, MailboxMailPage } from "./mailbox-views.js";

export function mailboxRoutes(
  kit: PageKit,
  deps: { mailbox: Pick<LocalMailbox, "listMailbox">; mailboxPath: string },
): Hono {
  const { mailbox, mailboxPath } = deps;
  const { holderName, langOf, t } = kit;
  const routes = new Hono();

  routes.get(mailboxPath, async (c) => {
    try {
      const entries = await mailbox.listMailbox({ limit: 200 });
      return await kit.render(
        c,
        200,
        <MailboxListPage
          holderName={holderName}
          entries={entries}
          base={mailboxPath}
          lang={langOf(c)}
          langSwitch={kit.switchable(c)}
        />,
      );
    } catch (error) {
      return kit.fail(c, error, kit.unknownLink);
    }
  });

  routes.get(`${mailboxPath}/:id`, async (c) => {
    const id = c.req.param("id") ?? "";
    const notFound = () => kit.message(c, 404, t(c).messages.noMailTitle, t(c).messages.noMail);
    if (!/^[1-9][0-9]{0,14}$/.test(id)) return notFound();
    try {
      const wanted = Number(id);
      const entry = (await mailbox.listMailbox({ limit: 1000 })).find((mail) => mail.id === wanted);
      if (entry === undefined) return await notFound();
      return await kit.render(
        c,
        200,
        <MailboxMailPage
          holderName={holderName}
          entry={entry}
          base={mailboxPath}
          lang={langOf(c)}
          langSwitch={kit.switchable(c)}
        />,
      );
    } catch (error) {
      return kit.fail(c, error, kit.unknownLink);
    }
  });

  routes.all(mailboxPath, kit.methodNotAllowed("GET, HEAD"));
  routes.all(`${mailboxPath}/:id`, kit.methodNotAllowed("GET, HEAD"));
  return routes;
}
