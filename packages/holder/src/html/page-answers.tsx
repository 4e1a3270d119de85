/**
 * The answers every person's page gives besides its own: the rendered page, the message pages
 * (unknown, used or expired link, refused or unreadable form, too large, wrong method) and the
 * one mapping of a service's failure to a page with the right status. A refused request changes
 * nothing, and the pages say so.
 */
import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { JSX } from "hono/jsx/jsx-runtime";
import type { Logger } from "pino";
import { HolderError, type HolderErrorCode } from "../model/types.js";
import { CLIENT_CLOSED_REQUEST, clientGone } from "../observability/client-gone.js";
import { MessagePage } from "./message-page.js";
import type { PageLanguage, Paragraph } from "./page-language.js";
import { MAX_FORM_BYTES } from "./security.js";

/** What a route answers when its link cannot (or can no longer) be used. */
export type GoneAnswer = (c: Context) => Promise<Response>;

export interface PageAnswers {
  render(c: Context, status: number, page: JSX.Element): Promise<Response>;
  message(c: Context, status: number, title: string, ...paragraphs: Paragraph[]): Promise<Response>;
  unknownLink: GoneAnswer;
  usedLink: GoneAnswer;
  expiredLink: GoneAnswer;
  /** A service's failure as a page: `gone` for a link that no longer works, 500 for the unexplained. */
  fail(c: Context, error: unknown, gone: GoneAnswer): Promise<Response>;
  refusedForm(c: Context, reason: "fetch-site" | "origin" | "token"): Promise<Response>;
  badForm(c: Context, reason: "content-type" | "malformed"): Promise<Response>;
  /** The 16 KB body limit of every POST, answered with a page. */
  tooLarge: MiddlewareHandler;
  methodNotAllowed(allow: string): (c: Context) => Promise<Response>;
}

export function createPageAnswers(
  holderName: string,
  language: PageLanguage,
  log: Pick<Logger, "error" | "debug"> | undefined,
): PageAnswers {
  const { langOf, t, switchable, detail } = language;
  const render = async (c: Context, status: number, page: JSX.Element): Promise<Response> => {
    const body = `<!doctype html>${await page.toString()}`;
    return c.html(body, status as 200);
  };
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

  const fail = (c: Context, error: unknown, gone: GoneAnswer): Promise<Response> => {
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
    if (clientGone(c)) {
      // A form whose client hung up mid-body: the client's doing, not the holder's failure.
      log?.debug({ event: "http.client_closed", route: c.req.routePath }, "the client closed the request");
      return Promise.resolve(new Response(null, { status: CLIENT_CLOSED_REQUEST }));
    }
    log?.error({ err: loggable(error), route: c.req.routePath }, "holder page failed");
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

  const methodNotAllowed = (allow: string) => async (c: Context) => {
    const response = await message(c, 405, t(c).messages.methodTitle, t(c).messages.method);
    response.headers.set("Allow", allow);
    return response;
  };

  return {
    render,
    message,
    unknownLink,
    usedLink,
    expiredLink,
    fail,
    refusedForm,
    badForm,
    tooLarge,
    methodNotAllowed,
  };
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

/** The status of each failure a service names. */
const STATUS_FOR: Record<HolderErrorCode, number> = {
  ERR_HOLDER_NOT_FOUND: 404,
  ERR_HOLDER_FORBIDDEN: 403,
  ERR_HOLDER_INVALID: 400,
  ERR_HOLDER_CONFLICT: 409,
  ERR_HOLDER_GONE: 410,
  ERR_HOLDER_RATE_LIMITED: 429,
  ERR_HOLDER_UNAVAILABLE: 503,
};
