/**
 * Which language a request gets: an explicit choice (the `lang` query parameter of the switch,
 * then the cookie it leaves) before the browser's `Accept-Language`, and English when nothing
 * matches. Pure functions of header values, so the pages and the tests share them.
 */
import { DEFAULT_LANG, isLang, type Lang } from "../model/languages.js";

export interface LanguageRange {
  /** Lower-case primary subtag, e.g. "sk" of "sk-SK"; "*" for the wildcard. */
  primary: string;
  q: number;
}

/** A header longer than this is not parsed (a browser sends a few dozen bytes). */
const MAX_HEADER = 1024;
const RANGE = /^([A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*|\*)$/;
const QVALUE = /^q=(0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/i;

/**
 * The ranges of an `Accept-Language` header (RFC 9110 §12.5.4), best first; ties keep the
 * header's order. Malformed entries are skipped, never an error.
 */
export function parseAcceptLanguage(header: string | undefined): LanguageRange[] {
  if (header === undefined || header.length > MAX_HEADER) return [];
  const ranges: (LanguageRange & { at: number })[] = [];
  header.split(",").forEach((entry, at) => {
    const [tag = "", ...params] = entry.split(";").map((part) => part.trim());
    if (!RANGE.test(tag)) return;
    let q = 1;
    for (const param of params) {
      const found = QVALUE.exec(param.replace(/\s+/g, ""));
      if (found === null) return;
      q = Number(found[1]);
    }
    if (q > 0) ranges.push({ primary: (tag.split("-")[0] as string).toLowerCase(), q, at });
  });
  ranges.sort((a, b) => b.q - a.q || a.at - b.at);
  return ranges.map(({ primary, q }) => ({ primary, q }));
}

/** The best of our languages for the header, or undefined when it names none of them. */
export function languageFromHeader(header: string | undefined): Lang | undefined {
  for (const range of parseAcceptLanguage(header)) {
    if (isLang(range.primary)) return range.primary;
    // A wildcard accepts anything: the fallback is as good as any.
    if (range.primary === "*") return DEFAULT_LANG;
  }
  return undefined;
}

export type LanguageSource = "query" | "cookie" | "header" | "default";

export interface LanguageChoice {
  lang: Lang;
  source: LanguageSource;
}

/** The switch's parameter wins, then the cookie it left, then the browser, then English. */
export function negotiateLanguage(input: {
  query?: string | undefined;
  cookie?: string | undefined;
  acceptLanguage?: string | undefined;
}): LanguageChoice {
  const query = input.query?.trim().toLowerCase();
  if (isLang(query)) return { lang: query, source: "query" };
  const cookie = input.cookie?.trim().toLowerCase();
  if (isLang(cookie)) return { lang: cookie, source: "cookie" };
  const header = languageFromHeader(input.acceptLanguage);
  if (header !== undefined) return { lang: header, source: "header" };
  return { lang: DEFAULT_LANG, source: "default" };
}
