/**
 * The languages the holder's pages and mails speak (the descriptor advertises the same three).
 * English is the fallback: whatever nobody asked for in a language we have is English.
 */
export const LANGUAGES = ["en", "sk", "cs"] as const;
export type Lang = (typeof LANGUAGES)[number];
export const DEFAULT_LANG: Lang = "en";

export function isLang(value: unknown): value is Lang {
  return typeof value === "string" && (LANGUAGES as readonly string[]).includes(value);
}

/** Each language named in itself, for the switch on the pages. */
export const LANGUAGE_NAMES: Readonly<Record<Lang, string>> = {
  en: "English",
  sk: "Slovenčina",
  cs: "Čeština",
};

/** The BCP 47 locale Intl formats dates and numbers with. */
export const LOCALES: Readonly<Record<Lang, string>> = {
  en: "en-GB",
  sk: "sk-SK",
  cs: "cs-CZ",
};
