/**
 * The rule that finds an untranslated string: a text a Slovak or Czech page (or mail) shows that
 * is word for word the text the English rendering of the same page shows. What is the same in
 * every language is taken out first: the values passed through (the holder's and the assistant's
 * names, addresses, URLs), what a page marks as code, what a form field holds (the visitor's own
 * words, given back in a text area), what it marks as quoted in English (a
 * paragraph or list with `lang="en"`: the agreement checker's own findings), the language switch's
 * own names, and the person's own quoted words in a mail. Whatever still has a word in it and
 * matches is English.
 */
import { LANGUAGE_NAMES } from "../../src/model/languages.js";

const ENTITIES: Readonly<Record<string, string>> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

const decode = (text: string): string =>
  text.replace(/&(#x?[0-9a-f]+|[a-z]+);/gi, (whole, name: string) => {
    if (name.startsWith("#x") || name.startsWith("#X"))
      return String.fromCodePoint(Number.parseInt(name.slice(2), 16));
    if (name.startsWith("#")) return String.fromCodePoint(Number(name.slice(1)));
    return ENTITIES[name.toLowerCase()] ?? whole;
  });

/** The text nodes of a page, whitespace collapsed, without styles, scripts, code, fields and quoted English. */
export function textNodes(html: string): string[] {
  const visible = html
    .replace(/<(style|script|code|textarea)\b[^>]*>[\s\S]*?<\/\1>/gi, " ")
    .replace(/<(p|ul|li)\b[^>]*\blang="en"[^>]*>[\s\S]*?<\/\1>/gi, " ")
    .replace(/<!--[\s\S]*?-->/g, " ");
  return visible
    .split(/<[^>]*>/)
    .map((node) => decode(node).replace(/\s+/g, " ").trim())
    .filter((node) => node !== "");
}

/** A mail's lines, without the quoted words of others and the signature's dashes. */
export function mailLines(text: string): string[] {
  return text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith(">") && line !== "--");
}

/** The same text with everything that stays the same in every language taken out. */
function withoutPassThrough(text: string, passThrough: readonly string[]): string {
  let rest = text.replace(/\bhttps?:\/\/\S+/g, " ").replace(/[\w.+-]+@[\w-]+(\.[\w-]+)+/g, " ");
  for (const value of [...passThrough, ...Object.values(LANGUAGE_NAMES)]) rest = rest.split(value).join(" ");
  return rest.replace(/\s+/g, " ").trim();
}

/** Whether what is left is words: two letters in a row, in any alphabet. */
const hasWords = (text: string): boolean => /\p{L}{2}/u.test(text);

/** The texts of `other` that are the English rendering's texts word for word. */
export function untranslated(
  english: readonly string[],
  other: readonly string[],
  passThrough: readonly string[],
): string[] {
  const englishTexts = new Set(english.map((text) => withoutPassThrough(text, passThrough)));
  return other.filter((text) => {
    const rest = withoutPassThrough(text, passThrough);
    return hasWords(rest) && englishTexts.has(rest);
  });
}
