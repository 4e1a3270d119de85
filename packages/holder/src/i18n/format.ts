/**
 * Places, prices, numbers and dates as each language writes them. Pure functions: the pages and
 * the mails say the same thing in the same language. English keeps the forms the holder always
 * used ("15,000 EUR", "30 Nov 2026, 12:00 UTC"); Slovak and Czech follow their locale
 * ("15 000 €", "30. 11. 2026, 12:00 UTC"). Times are in UTC and say so.
 */

import { type Lang, LOCALES } from "../model/languages.js";
import type { Area, Money } from "../model/types.js";
import { countryName, regionName } from "./places.js";

const cache = <T>(make: (lang: Lang) => T): ((lang: Lang) => T) => {
  const made = new Map<Lang, T>();
  return (lang) => {
    let value = made.get(lang);
    if (value === undefined) {
      value = make(lang);
      made.set(lang, value);
    }
    return value;
  };
};

const numbers = cache((lang) => new Intl.NumberFormat(lang === "en" ? "en-US" : LOCALES[lang]));
const dateTimes = cache(
  (lang) =>
    new Intl.DateTimeFormat(LOCALES[lang], { dateStyle: "medium", timeStyle: "short", timeZone: "UTC" }),
);
const plurals = cache((lang) => new Intl.PluralRules(LOCALES[lang]));

export function formatNumber(value: number, lang: Lang): string {
  return numbers(lang).format(value);
}

/** "Bratislava region, Slovakia" / "Bratislavský kraj, Slovensko". */
export function formatArea(area: Area, lang: Lang): string {
  const country = countryName(area.country, lang);
  if (area.region === undefined) return country;
  return `${regionName(area.region, lang)}, ${country}`;
}

/** Whole units: "15,000 EUR" in English, "15 000 €" / "15 000 Kč" in Slovak and Czech. */
export function formatMoney(money: Money, lang: Lang): string {
  if (lang === "en")
    return `${money.amount.toLocaleString("en-US", { maximumFractionDigits: 0 })} ${money.currency}`;
  try {
    return new Intl.NumberFormat(LOCALES[lang], {
      style: "currency",
      currency: money.currency,
      maximumFractionDigits: 0,
      minimumFractionDigits: 0,
    }).format(money.amount);
  } catch {
    return `${formatNumber(money.amount, lang)} ${money.currency}`;
  }
}

/** A date and time in UTC, e.g. "30 Nov 2026, 12:00 UTC"; an unparsable value is shown as given. */
export function formatDateTime(value: string | number, lang: Lang): string {
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return String(value);
  return `${dateTimes(lang).format(date)} UTC`;
}

const dates = cache(
  (lang) => new Intl.DateTimeFormat(LOCALES[lang], { dateStyle: "medium", timeZone: "UTC" }),
);

/**
 * A day (UTC) of an instant: "2026-12-31" in English (the form the holder's English mails always
 * used, the same as the manage page's date field), "31. 12. 2026" in Slovak and Czech.
 */
export function formatDay(value: number, lang: Lang): string {
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return String(value);
  return lang === "en" ? date.toISOString().slice(0, 10) : dates(lang).format(date);
}

/** The machine-readable form for `<time datetime>`. */
export function isoDateTime(value: string | number): string | undefined {
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/** The forms of a counted word: English needs one/other, Slovak and Czech also few (2–4). */
export interface PluralForms {
  one: string;
  few?: string;
  other: string;
}

/** `forms` chosen by the language's plural rule for `count`, with `#` replaced by the number. */
export function plural(count: number, forms: PluralForms, lang: Lang): string {
  const category = plurals(lang).select(count);
  const form = category === "one" ? forms.one : category === "few" ? (forms.few ?? forms.other) : forms.other;
  return form.replace("#", formatNumber(count, lang));
}
