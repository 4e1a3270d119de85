/**
 * Plain-words formatting for the pages: money, places, dates, statuses and criteria. English only
 * for now (the pages say `lang="en"`); every function is pure so the pages render the same text
 * in tests and in production.
 */
import type { Criteria, IntentStatus, Visibility } from "../../domain/types.js";

// The mails and the pages say places and prices the same way.
export { formatArea, formatMoney } from "../../mail/templates.js";

const DATE_TIME = new Intl.DateTimeFormat("en-GB", {
  dateStyle: "medium",
  timeStyle: "short",
  timeZone: "UTC",
});

/** "30 Nov 2026, 12:00 UTC"; an unparsable value is shown as given. */
export function formatDateTime(value: string | number): string {
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return String(value);
  return `${DATE_TIME.format(date)} UTC`;
}

/** The machine-readable form for `<time datetime>`. */
export function isoDateTime(value: string | number): string | undefined {
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

export function formatDuration(ms: number): string {
  const hours = Math.round(ms / 3_600_000);
  if (hours < 48) return hours === 1 ? "1 hour" : `${hours} hours`;
  const days = Math.round(hours / 24);
  return `${days} days`;
}

export const STATUS_WORDS: Record<IntentStatus, { label: string; explain: string }> = {
  awaiting_consent: {
    label: "Waiting for consent",
    explain: "Nobody has agreed to this request yet, so nothing is matched or sent.",
  },
  awaiting_email_confirmation: {
    label: "Waiting for e-mail confirmation",
    explain: "Open the confirmation link we e-mailed you to make this request active.",
  },
  active: {
    label: "Active",
    explain: "We match new offers against this request and e-mail you the ones that fit.",
  },
  expired: {
    label: "Expired",
    explain: "This request has ended. Nothing more is matched or sent.",
  },
  withdrawn: {
    label: "Withdrawn",
    explain: "You withdrew this request. Nothing more is matched or sent.",
  },
};

export const VISIBILITY_WORDS: Record<Visibility, string> = {
  private: "Private: only the holder's own catalogue is matched against it.",
  pseudonymous:
    "Pseudonymous: sellers may see the request under a pseudonym and answer it; they never see your e-mail.",
};

const FUEL: Record<string, string> = {
  petrol: "petrol",
  diesel: "diesel",
  hybrid: "hybrid",
  electric: "electric",
  lpg: "LPG",
};

const NUMBER = new Intl.NumberFormat("en");

/** One plain line per given criterion, category first. */
export function criteriaLines(criteria: Criteria | undefined): string[] {
  if (criteria === undefined) return [];
  const lines: string[] = [criteria.category === "vehicles" ? "Vehicles" : "Property"];
  const makeModel = [criteria.make, criteria.model].filter((part) => part !== undefined && part !== "");
  if (makeModel.length > 0) lines.push(makeModel.join(" "));
  if (criteria.yearMin !== undefined) lines.push(`Made in ${criteria.yearMin} or later`);
  if (criteria.mileageMaxKm !== undefined)
    lines.push(`At most ${NUMBER.format(criteria.mileageMaxKm)} km on the clock`);
  if (criteria.fuel !== undefined) lines.push(`Fuel: ${FUEL[criteria.fuel] ?? criteria.fuel}`);
  if (criteria.kind !== undefined) lines.push(`Kind: ${criteria.kind}`);
  if (criteria.roomsMin !== undefined)
    lines.push(criteria.roomsMin === 1 ? "At least 1 room" : `At least ${criteria.roomsMin} rooms`);
  if (criteria.areaMinM2 !== undefined) lines.push(`At least ${NUMBER.format(criteria.areaMinM2)} m²`);
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
