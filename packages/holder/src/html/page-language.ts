/**
 * The language of one page request, negotiated once (i18n/request-language.ts) and kept for the
 * request, so that every answer of a route speaks the same language.
 */
import type { Context } from "hono";
import { type Messages, messagesFor } from "../i18n/messages/index.js";
import { requestLanguage } from "../i18n/request-language.js";
import { DEFAULT_LANG, type Lang } from "../model/languages.js";

/** A paragraph of a message page; the services' own details are English, and marked so. */
export type Paragraph = string | { text: string; lang: Lang };

export interface PageLanguage {
  langOf(c: Context): Lang;
  /** Answers this request in `lang` from now on (a form says which text the person read). */
  setLang(c: Context, lang: Lang): void;
  t(c: Context): Messages;
  /** Only a page a GET shows again offers the switch (switching reloads the page by GET). */
  switchable(c: Context): boolean;
  /** An English detail from a service, shown as English on a page in another language. */
  detail(c: Context, text: string): Paragraph;
}

export function createPageLanguage(): PageLanguage {
  const languages = new WeakMap<Context, Lang>();
  const langOf = (c: Context): Lang => {
    let lang = languages.get(c);
    if (lang === undefined) {
      lang = requestLanguage(c);
      languages.set(c, lang);
    }
    return lang;
  };
  return {
    langOf,
    setLang: (c, lang) => {
      languages.set(c, lang);
    },
    t: (c) => messagesFor(langOf(c)),
    switchable: (c) => c.req.method === "GET",
    detail: (c, text) => (langOf(c) === DEFAULT_LANG ? text : { text, lang: DEFAULT_LANG }),
  };
}

/** A service's English sentence as a page shows it: a capital first, a full stop last. */
export const sentence = (text: string): string => {
  const trimmed = text.trim();
  const capital = trimmed.charAt(0).toUpperCase() + trimmed.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
};
