/**
 * The language of one page request, for Hono handlers: negotiated (negotiate.ts), remembered in
 * a cookie when the person used the switch, and announced in `Content-Language` and `Vary`.
 */
import type { Context } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { LANGUAGES, type Lang } from "../model/languages.js";
import { negotiateLanguage } from "./negotiate.js";

/** The switch's query parameter: `?lang=sk`. */
export const LANG_PARAM = "lang";
/** Where the switch's choice is kept: a preference only, nothing secret. */
export const LANG_COOKIE = "doorbell_lang";
const YEAR_SECONDS = 365 * 24 * 60 * 60;

export function requestLanguage(c: Context): Lang {
  const choice = negotiateLanguage({
    query: c.req.query(LANG_PARAM),
    cookie: getCookie(c, LANG_COOKIE),
    acceptLanguage: c.req.header("accept-language"),
  });
  if (choice.source === "query") {
    const secure = new URL(c.req.url).protocol === "https:";
    setCookie(c, LANG_COOKIE, choice.lang, {
      path: "/",
      httpOnly: true,
      sameSite: "Lax",
      secure,
      maxAge: YEAR_SECONDS,
    });
  }
  c.header("Content-Language", choice.lang);
  c.header("Vary", "Accept-Language, Cookie", { append: true });
  return choice.lang;
}

/** The switch's links: the same page in each other language (a relative URL keeps the path). */
export function languageLinks(current: Lang): { lang: Lang; href: string; current: boolean }[] {
  return LANGUAGES.map((lang) => ({ lang, href: `?${LANG_PARAM}=${lang}`, current: lang === current }));
}
