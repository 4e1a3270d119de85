/**
 * oidc-provider's error page in the holder's own layout: the holder's security headers and content
 * security policy, nothing loaded from anywhere else (the library's default page imports Google
 * Fonts), and only the error's code and description, escaped. It speaks the language the holder's
 * other pages would: the switch's cookie, then the browser's `Accept-Language`, then English.
 */

import { Layout } from "../html/layout.js";
import { PAGE_HEADERS } from "../html/security.js";
import { messagesFor } from "../i18n/messages/index.js";
import { negotiateLanguage } from "../i18n/negotiate.js";
import { LANG_COOKIE } from "../i18n/request-language.js";
import type { Lang } from "../model/languages.js";
import { quoteName } from "../model/quoting.js";

interface KoaLikeContext {
  type: string;
  body: unknown;
  set(name: string, value: string): void;
  get?(name: string): string;
  cookies?: { get(name: string, options?: { signed?: boolean }): string | undefined };
}

/** The language of the request that failed (the provider's Koa context). */
function errorPageLanguage(ctx: KoaLikeContext): Lang {
  let cookie: string | undefined;
  try {
    cookie = ctx.cookies?.get(LANG_COOKIE, { signed: false });
  } catch {
    cookie = undefined;
  }
  return negotiateLanguage({ cookie, acceptLanguage: ctx.get?.("accept-language") || undefined }).lang;
}

export function oauthErrorPage(holderName: string) {
  return async (ctx: KoaLikeContext, out: Record<string, unknown>): Promise<void> => {
    const code = typeof out.error === "string" ? out.error : "server_error";
    // The library's description may quote the request (a path, a parameter): someone else's words.
    const description =
      typeof out.error_description === "string" ? quoteName(out.error_description, 300) : "";
    const lang = errorPageLanguage(ctx);
    const t = messagesFor(lang).oauthError;
    const reasons: Readonly<Record<string, string | undefined>> = t.reasons;
    const page = (
      <Layout title={t.title} holderName={holderName} lang={lang}>
        <h1>{t.title}</h1>
        <p>{reasons[code] ?? t.otherReason}</p>
        <p class="muted">
          {t.forDeveloper}
          {/* The code and the library's description are for the developer, in English. */}
          <code lang="en">
            {code}
            {description === "" ? "" : `: ${description}`}
          </code>
        </p>
      </Layout>
    );
    for (const [name, value] of Object.entries(PAGE_HEADERS)) ctx.set(name, value);
    ctx.set("Content-Language", lang);
    ctx.set("Vary", "Accept-Language, Cookie");
    ctx.type = "html";
    ctx.body = `<!doctype html>${await page.toString()}`;
  };
}
