/**
 * The person's pages of the consent-link profile, mounted on the holder's Hono app:
 *
 *   GET  /consent/:token          the request, the consent text, e-mail and consent checkbox
 *   POST /consent/:token          gives consent (first-come, rule 3) and sends the double opt-in
 *   GET  /confirm/:token          a button only: mail scanners open links, so GET changes nothing
 *   POST /confirm/:token          activates the request
 *   GET  /manage/:token           the request, its status and its offers, with a withdraw form
 *   POST /manage/:token/withdraw  withdraws at once (one action)
 *   POST /manage/:token/renew     renews validUntil (the person's fresh action)
 *   POST /manage/:token/notifications/:id/(allow|stop)   a push subscription, one action each
 *   GET  /notifications/:token    the approval link of the e-mail (push profile §6 rule 3)
 *   POST /notifications/:token/(allow|stop)
 *   GET  /dev/mailbox[/:id]       the local mailbox, only when one is given
 *
 * Server-rendered, no script, plain forms. Every response carries the CSP, `no-referrer` and
 * `no-store` headers; every POST passes the form guard (security.ts) and a 16 KB body limit.
 * Refusals are pages with the right status, and a refused request changes nothing.
 *
 * Each concern's routes are a Hono app of their own (consent/pages, push/pages, mail/pages),
 * built on one page kit (html/page-kit.ts) and composed here with `route()`.
 */
import { Hono, type MiddlewareHandler } from "hono";
import type { Logger } from "pino";
import { assistantRoutes } from "../consent/pages/assistant-routes.js";
import { confirmRoutes } from "../consent/pages/confirm-routes.js";
import { consentRoutes } from "../consent/pages/consent-routes.js";
import { manageRoutes } from "../consent/pages/manage-routes.js";
import type { HolderConfig } from "../context.js";
import { createPageKit } from "../html/page-kit.js";
import { pageHeaders } from "../html/security.js";
import type { HolderLimits } from "../limits/index.js";
import type { LocalMailbox } from "../mail/local-mailbox.js";
import type { ConsentService, IntentService, MatchService } from "../model/services.js";
import type { IntentAssistants } from "../oauth/owners.js";
import { notificationRoutes } from "../push/pages/notification-routes.js";
import { AssistantsWithAccess, NotificationChoices, NotificationReceipts } from "../push/pages/views.js";
import type { PushService } from "../push/service.js";
import { mailboxRoutes } from "./pages/mailbox-routes.js";

export interface PagesDeps {
  consent: ConsentService;
  /** Not used by the pages yet (every page acts through a page token and ConsentService). */
  intents?: IntentService;
  /** Not used by the pages yet (manageView returns the matches). */
  matches?: MatchService;
  config: HolderConfig;
  /** The push profile's pages (choices, approval, receipts), when the holder offers it. */
  push?: PushService;
  /** OAuth: the manage page lists the person's assistants and revokes one. */
  assistants?: IntentAssistants;
  /**
   * The local mailbox; `/dev/mailbox` exists only when it is given. Pass
   * `isLocalMailbox(ctx.mailer) ? ctx.mailer : undefined`.
   */
  mailbox?: Pick<LocalMailbox, "listMailbox">;
  /**
   * Where the mailbox page is (createHolder makes it unguessable and prints it in
   * the start-up summary). Default `/dev/mailbox`.
   */
  mailboxPath?: string;
  /** The shared limits on mails asked for from the consent page. */
  limits?: HolderLimits;
  /** Failures the pages cannot explain (500s) are logged here, without the URL (it holds a token). */
  log?: Pick<Logger, "error" | "debug">;
  /** Randomness for the form tokens (default `crypto.randomBytes`). */
  random?: (size: number) => Uint8Array;
}

const PAGE_PATHS = [
  "/consent/*",
  "/confirm/*",
  "/manage/*",
  "/notifications/*",
  "/dev/mailbox",
  "/dev/mailbox/*",
] as const;

/** The person's pages as one Hono app, to be composed with `app.route("/", personPages(deps))`. */
export function personPages(deps: PagesDeps): Hono {
  const { consent, config, push, assistants, mailbox } = deps;
  const kit = createPageKit({
    holderName: config.name,
    publicUrl: config.publicUrl,
    random: deps.random,
    log: deps.log,
  });
  const mailboxPath = deps.mailboxPath ?? "/dev/mailbox";
  const mailboxUrl = mailbox !== undefined ? mailboxPath : undefined;

  // The consent pages show push's notifications and the signed-in assistants as slots.
  const slots = { NotificationChoices, NotificationReceipts, AssistantsWithAccess };
  const pages = new Hono();
  for (const path of PAGE_PATHS) pages.use(path, pageHeaders as MiddlewareHandler);
  pages.route("/", consentRoutes(kit, { consent, config, push, limits: deps.limits, mailboxUrl, slots }));
  pages.route("/", confirmRoutes(kit, { consent, mailboxUrl }));
  pages.route("/", manageRoutes(kit, { consent, config, push, assistants, slots }));
  if (assistants !== undefined) pages.route("/", assistantRoutes(kit, { consent, assistants }));
  if (push !== undefined) pages.route("/", notificationRoutes(kit, { consent, push }));
  if (mailbox !== undefined) pages.route("/", mailboxRoutes(kit, { mailbox, mailboxPath }));
  return pages;
}
