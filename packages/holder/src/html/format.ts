/**
 * Plain-words formatting for the pages: money, places, dates, statuses and criteria, in the
 * page's language (English when none is given). Every function is pure so the pages render the
 * same text in tests and in production.
 */

import * as i18n from "../i18n/format.js";
import { messagesFor } from "../i18n/messages/index.js";
import { DEFAULT_LANG, type Lang } from "../model/languages.js";
import type { Area, Criteria, IntentStatus, Money, Visibility } from "../model/types.js";

export { isoDateTime } from "../i18n/format.js";

export const formatArea = (area: Area, lang: Lang = DEFAULT_LANG): string => i18n.formatArea(area, lang);
export const formatMoney = (money: Money, lang: Lang = DEFAULT_LANG): string => i18n.formatMoney(money, lang);

/** "30 Nov 2026, 12:00 UTC"; an unparsable value is shown as given. */
export function formatDateTime(value: string | number, lang: Lang = DEFAULT_LANG): string {
  return i18n.formatDateTime(value, lang);
}

/** "48 hours", "2 days"; "48 hodín", "2 dni". */
export function formatDuration(ms: number, lang: Lang = DEFAULT_LANG): string {
  const words = messagesFor(lang).duration;
  const hours = Math.round(ms / 3_600_000);
  if (hours < 48) return i18n.plural(hours, words.hours, lang);
  return i18n.plural(Math.round(hours / 24), words.days, lang);
}

export function statusWords(
  status: IntentStatus,
  lang: Lang = DEFAULT_LANG,
): { label: string; explain: string } {
  return messagesFor(lang).status[status];
}

export function visibilityWords(visibility: Visibility, lang: Lang = DEFAULT_LANG): string {
  return messagesFor(lang).visibility[visibility];
}

/** One plain line per given criterion, category first. */
export function criteriaLines(criteria: Criteria | undefined, lang: Lang = DEFAULT_LANG): string[] {
  if (criteria === undefined) return [];
  const words = messagesFor(lang).criteria;
  const number = (value: number) => i18n.formatNumber(value, lang);
  const lines: string[] = [criteria.category === "vehicles" ? words.vehicles : words.property];
  const makeModel = [criteria.make, criteria.model].filter((part) => part !== undefined && part !== "");
  if (makeModel.length > 0) lines.push(makeModel.join(" "));
  if (criteria.yearMin !== undefined) lines.push(words.madeIn(criteria.yearMin));
  if (criteria.mileageMaxKm !== undefined) lines.push(words.mileage(number(criteria.mileageMaxKm)));
  if (criteria.fuel !== undefined) lines.push(words.fuel(words.fuels[criteria.fuel] ?? criteria.fuel));
  if (criteria.kind !== undefined) lines.push(words.kind(criteria.kind));
  if (criteria.roomsMin !== undefined) lines.push(i18n.plural(criteria.roomsMin, words.rooms, lang));
  if (criteria.areaMinM2 !== undefined) lines.push(words.area(number(criteria.areaMinM2)));
  return lines;
}

/** An offer's link is shown only when it is an absolute http(s) URL (never `javascript:` etc.). */
export function safeExternalUrl(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  try {
    const url = new URL(value);
    return url.protocol === "https:" || url.protocol === "http:" ? url.toString() : undefined;
  } catch {
    return undefined;
  }
}
