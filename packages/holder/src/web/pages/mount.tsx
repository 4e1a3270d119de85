/**
 * The person's pages of the consent-link profile, mounted on the holder's Hono app:
 *
 *   GET  /consent/:token          the request, the consent text, e-mail and consent checkbox
 *   POST /consent/:token          gives consent (first-come, rule 3) and sends the double opt-in
 *   GET  /confirm/:token          a button only: mail scanners open links, so GET changes nothing
 *   POST /confirm/:token          activates the request
 *   GET  /manage/:token           the request, its status and its offers, with a withdraw form
 *   POST /manage/:token/withdraw  withdraws at once (one action)
 *   POST /manage/:token/renew     renews validUntil (the person's fresh action; issue 16 item 12)
 *   POST /manage/:token/notifications/:id/(allow|stop)   a push subscription, one action each
 *   GET  /notifications/:token    the approval link of the e-mail (push profile §6 rule 3)
 *   POST /notifications/:token/(allow|stop)
 *   GET  /dev/mailbox[/:id]       the local mailbox, only when one is given
 *
 * Server-rendered, no script, plain forms. Every response carries the CSP, `no-referrer` and
 * `no-store` headers; every POST passes the form guard (security.ts) and a 16 KB body limit.
 * Refusals are pages with the right status, and a refused request changes nothing.
 */
import type { Context, Env, Hono, MiddlewareHandler, Schema } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { JSX } from "hono/jsx/jsx-runtime";
import type { Logger } from "pino";
import type { HolderConfig } from "../../context.js";
import {
  createFormGuard,
  isTokenShaped,
  MAX_FORM_BYTES,
  pageHeaders,
  readForm,
} from "../../html/security.js";
import { consentTextByVersion } from "../../i18n/consent-texts.js";
import { plural } from "../../i18n/format.js";
import { messagesFor } from "../../i18n/messages/index.js";
import { requestLanguage } from "../../i18n/request-language.js";
import { type HolderLimits, peerAddress } from "../../limits/index.js";
import { normaliseEmail } from "../../mail/address.js";
import type { LocalMailbox } from "../../mail/local-mailbox.js";
import { allowRequestedMail, minutesToWait } from "../../mail/request-limits.js";
import { DEFAULT_LANG, type Lang } from "../../model/languages.js";
import type { ConsentService, IntentService, MatchService } from "../../model/services.js";
import { HolderError, type HolderErrorCode } from "../../model/types.js";
import type { IntentAssistants } from "../../oauth/owners.js";
import type { PushService } from "../../push/service.js";
import { consentChoiceField, NotificationApprovalPage } from "./notification-views.js";
import {
  ActivePage,
  CheckEmailPage,
  ConfirmPage,
  type ConsentErrors,
  ConsentFormPage,
  MailboxListPage,
  MailboxMailPage,
  ManagePage,
  MessagePage,
  WithdrawnPage,
} from "./views.js";

export interface PagesDeps {
  consent: ConsentService;
  /** Not used by the pages yet (every page acts through a page token and ConsentService). */
  intents?: IntentService;
  /** Not used by the pages yet (manageView returns the matches). */
  matches?: MatchService;
  config: HolderConfig;
  /** The push profile's pages (choices, approval, receipts), when the holder offers it. */
  push?: PushService;
  /** OAuth (issue #8): the manage page lists the person's assistants and revokes one. */
  assistants?: IntentAssistants;
  /**
   * The local mailbox; `/dev/mailbox` exists only when it is given. Pass
   * `isLocalMailbox(ctx.mailer) ? ctx.mailer : undefined`.
   */
  mailbox?: Pick<LocalMailbox, "listMailbox">;
  /**
   * Where the mailbox page is (issue #16 item 1: createHolder makes it unguessable and prints it in
   * the start-up summary). Default `/dev/mailbox`.
   */
  mailboxPath?: string;
  /** Issue #16 item 2: the shared limits on mails asked for from the consent page. */
  limits?: HolderLimits;
  /** Failures the pages cannot explain (500s) are logged here, without the URL (it holds a token). */
  log?: Pick<Logger, "error">;
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
/** An OAuth grant id (oidc-provider's, URL-safe) in a page URL. */
const GRANT_ID = /^[A-Za-z0-9_-]{10,64}$/;
/** A subscription id in a page URL. */
const SUBSCRIPTION_ID = /^sub_[A-Za-z0-9]{16,64}$/;

/**
 * Why an address is refused, as a sentence: the service's own (English) words, or in Slovak and
 * Czech one plain sentence with an example.
 */
function emailProblem(email: string, lang: Lang): string | undefined {
  const words = messagesFor(lang).consent.errors;
  if (email === "") return words.emailMissing;
  try {
    normaliseEmail(email);
    return undefined;
  } catch (error) {
    if (!(error instanceof HolderError)) throw error;
    return lang === DEFAULT_LANG ? sentence(error.message) : words.emailInvalid;
  }
}

/** A paragraph of a message page; the services' own details are English, and marked so. */
type Paragraph = string | { text: string; lang: Lang };

const sentence = (text: string): string => {
  const trimmed = text.trim();
  const capital = trimmed.charAt(0).toUpperCase() + trimmed.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
};

export function mountPages<E extends Env, S extends Schema, B extends string>(
  app: Hono<E, S, B>,
  deps: PagesDeps,
): void {
  const { consent, config, push, assistants } = deps;
  const holderName = config.name;
  const guard = createFormGuard({
    publicUrl: config.publicUrl,
    ...(deps.random ? { random: deps.random } : {}),
  });
  const mailboxPath = deps.mailboxPath ?? "/dev/mailbox";
  const mailboxUrl = deps.mailbox !== undefined ? mailboxPath : undefined;

  const render = async (c: Context, status: number, page: JSX.Element): Promise<Response> => {
    const body = `<!doctype html>${await page.toString()}`;
    return c.html(body, status as 200);
  };

  /** The request's language, negotiated once (i18n/request-language.ts). */
  const languages = new WeakMap<Context, Lang>();
  const langOf = (c: Context): Lang => {
    let lang = languages.get(c);
    if (lang === undefined) {
      lang = requestLanguage(c);
      languages.set(c, lang);
    }
    return lang;
  };
  const t = (c: Context) => messagesFor(langOf(c));
  /** Only a page a GET shows again offers the switch (switching reloads the page by GET). */
  const switchable = (c: Context) => c.req.method === "GET";
  /** An English detail from a service, shown as English on a page in another language. */
  const detail = (c: Context, text: string): Paragraph =>
    langOf(c) === DEFAULT_LANG ? text : { text, lang: DEFAULT_LANG };

  const message = (c: Context, status: number, title: string, ...paragraphs: Paragraph[]) =>
    render(
      c,
      status,
      <MessagePage holderName={holderName} title={title} lang={langOf(c)} langSwitch={switchable(c)}>
        {paragraphs.map((paragraph) =>
          typeof paragraph === "string" ? <p>{paragraph}</p> : <p lang={paragraph.lang}>{paragraph.text}</p>,
        )}
      </MessagePage>,
    );

  const unknownLink = (c: Context) => message(c, 404, t(c).messages.unknownTitle, ...t(c).messages.unknown);

  const usedLink = (c: Context) => message(c, 410, t(c).messages.usedTitle, ...t(c).messages.used);

  const expiredLink = (c: Context) => message(c, 410, t(c).messages.expiredTitle, ...t(c).messages.expired);

  const closedConsent = (c: Context, state: "taken" | "expired" | "unknown") =>
    state === "taken" ? usedLink(c) : state === "expired" ? expiredLink(c) : unknownLink(c);

  const fail = (c: Context, error: unknown, gone: (c: Context) => Promise<Response>): Promise<Response> => {
    if (error instanceof HolderError) {
      const status = STATUS_FOR[error.code];
      if (error.code === "ERR_HOLDER_NOT_FOUND") return unknownLink(c);
      if (error.code === "ERR_HOLDER_GONE" || error.code === "ERR_HOLDER_CONFLICT") return gone(c);
      const words = t(c).messages;
      if (error.code === "ERR_HOLDER_RATE_LIMITED")
        return message(c, status, words.rateLimitedTitle, words.rateLimited);
      if (error.code === "ERR_HOLDER_UNAVAILABLE")
        return message(c, status, words.unavailableTitle, detail(c, error.message), words.nothingChanged);
      if (error.code === "ERR_HOLDER_FORBIDDEN")
        return message(c, status, words.forbiddenTitle, words.forbidden);
      return message(c, status, words.failedTitle, detail(c, error.message));
    }
    deps.log?.error({ err: loggable(error), route: c.req.routePath }, "holder page failed");
    return message(c, 500, t(c).messages.internalTitle, t(c).messages.internal);
  };

  const refusedForm = (c: Context, reason: "fetch-site" | "origin" | "token") => {
    const words = t(c).messages;
    return message(
      c,
      403,
      words.refusedTitle,
      reason === "token" ? words.refusedToken : words.refusedSite,
      words.nothingChanged,
    );
  };

  const badForm = (c: Context, reason: "content-type" | "malformed") => {
    const words = t(c).messages;
    return message(
      c,
      reason === "content-type" ? 415 : 400,
      words.unreadableTitle,
      words.unreadable,
      words.nothingChanged,
    );
  };

  const tooLarge = bodyLimit({
    maxSize: MAX_FORM_BYTES,
    onError: (c) => {
      const words = t(c).messages;
      return message(
        c,
        413,
        words.tooLargeTitle,
        words.tooLarge(MAX_FORM_BYTES / 1024),
        words.nothingChanged,
      );
    },
  }) as MiddlewareHandler;

  /** The token from the URL, or undefined when it cannot be one of ours. */
  const tokenOf = (c: Context): string | undefined => {
    const token = c.req.param("token");
    return isTokenShaped(token) ? token : undefined;
  };

  /** Reads and checks a POSTed form: the guard first, then the fields. */
  const postedForm = async (c: Context): Promise<Record<string, string> | Response> => {
    const form = await readForm(c);
    if (!form.ok) return badForm(c, form.reason);
    const refused = guard.check(c, form.fields.csrf);
    if (refused !== undefined) return refusedForm(c, refused);
    return form.fields;
  };

  const methodNotAllowed = (allow: string) => async (c: Context) => {
    const response = await message(c, 405, t(c).messages.methodTitle, t(c).messages.method);
    response.headers.set("Allow", allow);
    return response;
  };

  for (const path of PAGE_PATHS) app.use(path, pageHeaders as MiddlewareHandler<E>);

  // ---- consent: rules 2, 3 and 5 --------------------------------------------------------------

  const consentForm = async (
    c: Context,
    token: string,
    status: number,
    extra: { email?: string; errors?: ConsentErrors } = {},
  ): Promise<Response> => {
    const lang = langOf(c);
    const view = await consent.consentView(token, lang);
    if (view.state !== "open") return closedConsent(c, view.state);
    const notifications = push === undefined ? [] : await push.consentChoices(view.intent.id);
    return render(
      c,
      status,
      <ConsentFormPage
        holderName={holderName}
        intent={view.intent}
        consentText={view.consentText}
        consentVersion={view.consentVersion}
        {...(view.consentLanguage !== undefined && view.consentLanguage !== lang
          ? { consentLanguage: view.consentLanguage }
          : {})}
        action={`/consent/${token}`}
        csrf={guard.issue(c)}
        notifications={notifications}
        lang={lang}
        langSwitch={switchable(c)}
        {...extra}
      />,
    );
  };

  app.get("/consent/:token", async (c) => {
    const token = tokenOf(c);
    if (token === undefined) return unknownLink(c);
    try {
      return await consentForm(c, token, 200);
    } catch (error) {
      return fail(c, error, usedLink);
    }
  });

  app.post("/consent/:token", tooLarge, async (c) => {
    const token = tokenOf(c);
    if (token === undefined) return unknownLink(c);
    try {
      const fields = await postedForm(c);
      if (fields instanceof Response) return fields;
      // The answer speaks the language of the text the person read (the form says which).
      const lang = consentTextByVersion(config, fields.consentVersion)?.lang ?? langOf(c);
      if (lang !== langOf(c)) {
        languages.set(c, lang);
        c.header("Content-Language", lang);
      }
      const view = await consent.consentView(token, lang);
      if (view.state !== "open") return closedConsent(c, view.state);

      const words = messagesFor(lang).consent.errors;
      const email = (fields.email ?? "").trim();
      const errors: ConsentErrors = {};
      if (fields.consentVersion !== view.consentVersion) errors.version = words.version;
      const problem = emailProblem(email, lang);
      if (problem !== undefined) errors.email = problem;
      if (fields.consent !== "yes" || errors.version !== undefined) errors.consent = words.consent;
      if (errors.email !== undefined || errors.consent !== undefined || errors.version !== undefined) {
        const status = errors.version !== undefined ? 409 : 400;
        return await consentForm(c, token, status, { email: email.slice(0, 254), errors });
      }
      if (deps.limits !== undefined) {
        // Issue #16 item 2: a confirmation is a mail anyone with the link asks for.
        const verdict = await allowRequestedMail(deps.limits, {
          recipient: email,
          clientKey: deps.limits.clientKey(peerAddress(c.env), c.req.raw.headers),
          interaction: `consent:${view.intent.id}`,
        });
        if (!verdict.ok) {
          const words = messagesFor(lang);
          const wait = plural(minutesToWait(verdict.retryAfterSeconds), words.duration.minutes, lang);
          const refused = await message(
            c,
            429,
            words.messages.mailLimitedTitle,
            words.messages.mailLimited(wait),
            words.messages.limitHint(verdict.limit),
          );
          refused.headers.set("Retry-After", String(verdict.retryAfterSeconds));
          return refused;
        }
      }
      try {
        // The record names the text, and so the language, the person agreed to.
        await consent.giveConsent(token, { email, accepted: true, consentVersion: view.consentVersion });
        if (push !== undefined) {
          // Push §6 rule 3: only boxes the person ticked; confirming decides the rest.
          const choices = await push.consentChoices(view.intent.id);
          const chosen = choices.filter((choice) => fields[consentChoiceField(choice.id)] === "yes");
          await push.chooseOnConsent(
            view.intent.id,
            chosen.map((choice) => choice.id),
          );
        }
      } catch (error) {
        if (error instanceof HolderError && error.code === "ERR_HOLDER_INVALID") {
          return await consentForm(c, token, 400, {
            email,
            errors: { email: lang === DEFAULT_LANG ? sentence(error.message) : words.emailInvalid },
          });
        }
        throw error;
      }
      return await render(
        c,
        200,
        <CheckEmailPage
          holderName={holderName}
          confirmTtlMs={config.confirmTtlMs}
          {...(mailboxUrl ? { mailboxUrl } : {})}
          lang={lang}
        />,
      );
    } catch (error) {
      return fail(c, error, usedLink);
    }
  });

  app.all("/consent/:token", methodNotAllowed("GET, HEAD, POST"));

  // ---- confirm: the double opt-in --------------------------------------------------------------

  const confirmGone = (c: Context) =>
    message(c, 410, t(c).confirm.goneTitle, t(c).confirm.gone, t(c).confirm.goneNext);

  app.get("/confirm/:token", async (c) => {
    const token = tokenOf(c);
    if (token === undefined) return unknownLink(c);
    try {
      // A link already used says so first: no button that would only answer "already done".
      const state = await consent.confirmState(token);
      if (state === "confirmed")
        return await message(c, 200, t(c).confirm.usedTitle, t(c).confirm.used, t(c).confirm.usedManage);
      if (state === "ended") return await confirmGone(c);
      // "open", and "unknown" too: the POST answers an unknown link (a GET reveals nothing more).
      return await render(
        c,
        200,
        <ConfirmPage
          holderName={holderName}
          action={`/confirm/${token}`}
          csrf={guard.issue(c)}
          lang={langOf(c)}
          langSwitch={switchable(c)}
        />,
      );
    } catch (error) {
      return fail(c, error, confirmGone);
    }
  });

  app.post("/confirm/:token", tooLarge, async (c) => {
    const token = tokenOf(c);
    if (token === undefined) return unknownLink(c);
    try {
      const fields = await postedForm(c);
      if (fields instanceof Response) return fields;
      const intent = await consent.confirmEmail(token);
      // ConsentService.confirmEmail does not return the manage token, so the page points at the
      // manage link every e-mail carries instead of linking it directly.
      return await render(
        c,
        200,
        <ActivePage
          holderName={holderName}
          intent={intent}
          {...(mailboxUrl ? { mailboxUrl } : {})}
          lang={langOf(c)}
        />,
      );
    } catch (error) {
      return fail(c, error, confirmGone);
    }
  });

  app.all("/confirm/:token", methodNotAllowed("GET, HEAD, POST"));

  // ---- manage: see the offers, withdraw in one action -------------------------------------------

  const manageGone = (c: Context) => message(c, 410, t(c).messages.manageGoneTitle, t(c).messages.manageGone);

  app.get("/manage/:token", async (c) => {
    const token = tokenOf(c);
    if (token === undefined) return unknownLink(c);
    try {
      const { intent, matches } = await consent.manageView(token);
      const notifications = push === undefined ? [] : await push.receipts(intent.id);
      const signedIn = assistants === undefined ? [] : await assistants.list(intent.id);
      return await render(
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
                // An assistant's renewal offer links here with its date (issue 16 item 12).
                ...(/^\d{4}-\d{2}-\d{2}$/.test(c.req.query("renew") ?? "")
                  ? { renewValue: c.req.query("renew") as string }
                  : {}),
              })}
          csrf={guard.issue(c)}
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
          lang={langOf(c)}
          langSwitch={switchable(c)}
        />,
      );
    } catch (error) {
      return fail(c, error, manageGone);
    }
  });

  app.all("/manage/:token", methodNotAllowed("GET, HEAD"));

  app.post("/manage/:token/withdraw", tooLarge, async (c) => {
    const token = tokenOf(c);
    if (token === undefined) return unknownLink(c);
    try {
      const fields = await postedForm(c);
      if (fields instanceof Response) return fields;
      const intent = await consent.withdrawByManageToken(token);
      return await render(
        c,
        200,
        <WithdrawnPage
          holderName={holderName}
          intent={intent}
          manageUrl={`/manage/${token}`}
          lang={langOf(c)}
        />,
      );
    } catch (error) {
      return fail(c, error, manageGone);
    }
  });

  app.all("/manage/:token/withdraw", methodNotAllowed("POST"));

  // Renewing validUntil needs the person's fresh action (push profile): this form, nothing else.
  app.post("/manage/:token/renew", tooLarge, async (c) => {
    const token = tokenOf(c);
    if (token === undefined) return unknownLink(c);
    try {
      const fields = await postedForm(c);
      if (fields instanceof Response) return fields;
      if (consent.renewByManageToken === undefined) return unknownLink(c);
      await consent.renewByManageToken(token, fields.validUntil ?? "");
      return c.redirect(`/manage/${token}#renew`, 303);
    } catch (error) {
      return fail(c, error, manageGone);
    }
  });

  app.all("/manage/:token/renew", methodNotAllowed("POST"));

  // ---- assistants: OAuth access the person gave, revoked in one action (issue #8) ---------------

  if (assistants !== undefined) {
    app.post("/manage/:token/assistants/:grant/revoke", tooLarge, async (c) => {
      const token = tokenOf(c);
      const grant = c.req.param("grant") ?? "";
      if (token === undefined || !GRANT_ID.test(grant)) return unknownLink(c);
      try {
        const fields = await postedForm(c);
        if (fields instanceof Response) return fields;
        const { intent } = await consent.manageView(token);
        if (!(await assistants.revoke(intent.id, grant))) return unknownLink(c);
        return c.redirect(`/manage/${token}#assistants`, 303);
      } catch (error) {
        return fail(c, error, manageGone);
      }
    });
    app.all("/manage/:token/assistants/:grant/revoke", methodNotAllowed("POST"));
  }

  // ---- notifications: the push profile's approval and revocation (§6 rule 3) -------------------

  if (push !== undefined) {
    const notificationGone = (c: Context) =>
      message(c, 410, t(c).messages.notificationsGoneTitle, t(c).messages.notificationsGone);

    app.post("/manage/:token/notifications/:id/:action{allow|stop}", tooLarge, async (c) => {
      const token = tokenOf(c);
      const id = c.req.param("id") ?? "";
      if (token === undefined || !SUBSCRIPTION_ID.test(id)) return unknownLink(c);
      try {
        const fields = await postedForm(c);
        if (fields instanceof Response) return fields;
        const { intent } = await consent.manageView(token);
        if (c.req.param("action") === "allow") await push.approve(intent.id, id);
        else await push.revoke(intent.id, id);
        return c.redirect(`/manage/${token}#notifications`, 303);
      } catch (error) {
        return fail(c, error, notificationGone);
      }
    });
    app.all("/manage/:token/notifications/:id/:action", methodNotAllowed("POST"));

    const approvalPage = async (c: Context, token: string, status: number, done?: "allowed" | "stopped") => {
      const view = await push.approvalView(token);
      return render(
        c,
        status,
        <NotificationApprovalPage
          holderName={holderName}
          statement={view.statement}
          receipt={view.receipt}
          allowAction={`/notifications/${token}/allow`}
          stopAction={`/notifications/${token}/stop`}
          csrf={guard.issue(c)}
          {...(done === undefined ? {} : { done })}
          lang={langOf(c)}
          langSwitch={switchable(c)}
        />,
      );
    };

    app.get("/notifications/:token", async (c) => {
      const token = tokenOf(c);
      if (token === undefined) return unknownLink(c);
      try {
        return await approvalPage(c, token, 200);
      } catch (error) {
        return fail(c, error, notificationGone);
      }
    });
    app.all("/notifications/:token", methodNotAllowed("GET, HEAD"));

    app.post("/notifications/:token/:action{allow|stop}", tooLarge, async (c) => {
      const token = tokenOf(c);
      if (token === undefined) return unknownLink(c);
      try {
        const fields = await postedForm(c);
        if (fields instanceof Response) return fields;
        const view = await push.approvalView(token);
        const allow = c.req.param("action") === "allow";
        if (allow) await push.approve(view.intentId, view.receipt.id);
        else await push.revoke(view.intentId, view.receipt.id);
        return await approvalPage(c, token, 200, allow ? "allowed" : "stopped");
      } catch (error) {
        return fail(c, error, notificationGone);
      }
    });
    app.all("/notifications/:token/:action", methodNotAllowed("POST"));
  }

  // ---- the local mailbox (development) ---------------------------------------------------------

  const { mailbox } = deps;
  if (mailbox === undefined) return;

  app.get(mailboxPath, async (c) => {
    try {
      const entries = await mailbox.listMailbox({ limit: 200 });
      return await render(
        c,
        200,
        <MailboxListPage
          holderName={holderName}
          entries={entries}
          base={mailboxPath}
          lang={langOf(c)}
          langSwitch={switchable(c)}
        />,
      );
    } catch (error) {
      return fail(c, error, unknownLink);
    }
  });

  app.get(`${mailboxPath}/:id`, async (c) => {
    const id = c.req.param("id") ?? "";
    const notFound = () => message(c, 404, t(c).messages.noMailTitle, t(c).messages.noMail);
    if (!/^[1-9][0-9]{0,14}$/.test(id)) return notFound();
    try {
      const wanted = Number(id);
      const entry = (await mailbox.listMailbox({ limit: 1000 })).find((mail) => mail.id === wanted);
      if (entry === undefined) return await notFound();
      return await render(
        c,
        200,
        <MailboxMailPage
          holderName={holderName}
          entry={entry}
          base={mailboxPath}
          lang={langOf(c)}
          langSwitch={switchable(c)}
        />,
      );
    } catch (error) {
      return fail(c, error, unknownLink);
    }
  });

  app.all(mailboxPath, methodNotAllowed("GET, HEAD"));
  app.all(`${mailboxPath}/:id`, methodNotAllowed("GET, HEAD"));
}

/**
 * What a page failure may put in the log: the error's name, code and message with anything that
 * could be a page token, a code or an e-mail address cut out (a driver's message may quote the
 * query's parameters). Never the URL, which holds the token.
 */
function loggable(error: unknown): { name: string; code?: string; message: string } {
  const redact = (text: string) =>
    text.replace(/\S+@\S+/g, "[redacted]").replace(/[A-Za-z0-9_-]{20,}/g, "[redacted]");
  if (!(error instanceof Error)) return { name: typeof error, message: redact(String(error)).slice(0, 500) };
  const code = (error as { code?: unknown }).code;
  return {
    name: error.name,
    ...(typeof code === "string" ? { code } : {}),
    message: redact(error.message).slice(0, 500),
  };
}

const STATUS_FOR: Record<HolderErrorCode, number> = {
  ERR_HOLDER_NOT_FOUND: 404,
  ERR_HOLDER_FORBIDDEN: 403,
  ERR_HOLDER_INVALID: 400,
  ERR_HOLDER_CONFLICT: 409,
  ERR_HOLDER_GONE: 410,
  ERR_HOLDER_RATE_LIMITED: 429,
  ERR_HOLDER_UNAVAILABLE: 503,
};
