/** Input validation: the MCP layer checks shapes first; this is the domain's own, precise check. */

import { AREA_REGIONS as REGIONS, STATEMENT_MAX } from "@doorbell/intents";
import type { HolderContext } from "../context.js";
import {
  type Area,
  type Category,
  type Country,
  type Criteria,
  type Currency,
  HolderError,
  type Money,
  type Visibility,
} from "../model/types.js";
import type { HiddenLimit } from "./sealed.js";

export const invalid = (message: string): HolderError => new HolderError("ERR_HOLDER_INVALID", message);

const COUNTRIES: readonly Country[] = ["SK", "CZ"];
const CATEGORIES: readonly Category[] = ["vehicles", "property"];
const CURRENCIES: readonly Currency[] = ["EUR", "CZK"];
const FUELS = ["petrol", "diesel", "hybrid", "electric", "lpg"] as const;
const KINDS = ["flat", "house", "land"] as const;
const VISIBILITIES: readonly Visibility[] = ["private", "pseudonymous"];

/** The currency a hidden limit is in when the intent has no budget. */
export const COUNTRY_CURRENCY: Readonly<Record<Country, Currency>> = { SK: "EUR", CZ: "CZK" };

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

export function onlyKeys(value: Record<string, unknown>, allowed: readonly string[], where: string): void {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) {
      throw invalid(`${where} has no field "${key.slice(0, 40)}"; allowed fields: ${allowed.join(", ")}`);
    }
  }
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[], field: string): T {
  if (typeof value !== "string" || !(allowed as readonly string[]).includes(value)) {
    throw invalid(`${field} must be one of ${allowed.join(", ")}`);
  }
  return value as T;
}

function integerIn(value: unknown, field: string, min: number, max: number): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min || value > max) {
    throw invalid(`${field} must be a whole number from ${min} to ${max}`);
  }
  return value;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/;

function text(value: unknown, field: string, min: number, max: number): string {
  if (typeof value !== "string") throw invalid(`${field} must be a string of ${min} to ${max} characters`);
  const trimmed = value.trim();
  const length = [...trimmed].length;
  if (length < min || length > max) {
    throw invalid(`${field} must be ${min} to ${max} characters (it has ${length} after trimming spaces)`);
  }
  if (CONTROL.test(trimmed)) throw invalid(`${field} must not contain control characters`);
  return trimmed;
}

export function validateStatement(value: unknown): string {
  return text(value, "statement", 1, STATEMENT_MAX);
}

export function validateArea(value: unknown): Area {
  if (!isRecord(value)) throw invalid('area must be an object like { "country": "SK", "region": "SK-BL" }');
  onlyKeys(value, ["country", "region"], "area");
  const country = oneOf(value.country, COUNTRIES, "area.country");
  if (value.region === undefined) return { country };
  const regions = REGIONS[country];
  if (typeof value.region !== "string" || !regions.includes(value.region)) {
    throw invalid(
      `area.region must be an ISO 3166-2 region code of ${country}, e.g. ${regions[1]} (one of ${regions.join(", ")})`,
    );
  }
  return { country, region: value.region };
}

const MONEY_MAX = 1_000_000_000_000;

export function validateBudget(value: unknown): Money {
  if (!isRecord(value)) throw invalid('budget must be an object like { "amount": 15000, "currency": "EUR" }');
  onlyKeys(value, ["amount", "currency"], "budget");
  const amount = integerIn(value.amount, "budget.amount", 1, MONEY_MAX);
  const currency = oneOf(value.currency, CURRENCIES, "budget.currency");
  return { amount, currency };
}

/** Never echoes the value: a refused limit is still the buyer's secret. */
export function validateHiddenLimit(value: unknown): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0 || value > MONEY_MAX) {
    throw invalid(`hiddenLimit must be a positive number (at most ${MONEY_MAX}) in the budget's currency`);
  }
  return value;
}

const VEHICLE_FIELDS = ["make", "model", "yearMin", "mileageMaxKm", "fuel"] as const;
const PROPERTY_FIELDS = ["kind", "roomsMin", "areaMinM2"] as const;

export function validateCriteria(value: unknown, now: number): Criteria {
  if (!isRecord(value))
    throw invalid('criteria must be an object with a category, e.g. { "category": "vehicles" }');
  const category = oneOf(value.category, CATEGORIES, "criteria.category");
  const own: readonly string[] = category === "vehicles" ? VEHICLE_FIELDS : PROPERTY_FIELDS;
  for (const key of Object.keys(value)) {
    if (key === "category" || own.includes(key)) continue;
    const other = category === "vehicles" ? PROPERTY_FIELDS : VEHICLE_FIELDS;
    if ((other as readonly string[]).includes(key)) {
      throw invalid(
        `criteria.${key} applies to ${category === "vehicles" ? "property" : "vehicles"}, not ${category}`,
      );
    }
    throw invalid(
      `criteria has no field "${key.slice(0, 40)}"; fields for ${category}: category, ${own.join(", ")}`,
    );
  }
  const criteria: Criteria = { category };
  if (category === "vehicles") {
    if (value.make !== undefined) criteria.make = text(value.make, "criteria.make", 1, 60);
    if (value.model !== undefined) criteria.model = text(value.model, "criteria.model", 1, 60);
    if (value.yearMin !== undefined) {
      criteria.yearMin = integerIn(
        value.yearMin,
        "criteria.yearMin",
        1900,
        new Date(now).getUTCFullYear() + 1,
      );
    }
    if (value.mileageMaxKm !== undefined) {
      criteria.mileageMaxKm = integerIn(value.mileageMaxKm, "criteria.mileageMaxKm", 0, 2_000_000);
    }
    if (value.fuel !== undefined) criteria.fuel = oneOf(value.fuel, FUELS, "criteria.fuel");
  } else {
    if (value.kind !== undefined) criteria.kind = oneOf(value.kind, KINDS, "criteria.kind");
    if (value.roomsMin !== undefined)
      criteria.roomsMin = integerIn(value.roomsMin, "criteria.roomsMin", 1, 20);
    if (value.areaMinM2 !== undefined) {
      const area = value.areaMinM2;
      if (typeof area !== "number" || !Number.isFinite(area) || area <= 0 || area > 1_000_000) {
        throw invalid("criteria.areaMinM2 must be a positive number of square metres (at most 1000000)");
      }
      criteria.areaMinM2 = area;
    }
  }
  return criteria;
}

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:\d{2})$/i;

/**
 * An ISO 8601 instant: a date-time with `Z` or an offset, or a calendar date (taken as the end
 * of that day, UTC). Returns epoch milliseconds; refuses impossible dates such as 2027-02-30.
 */
export function parseIsoInstant(value: unknown, field: string): number {
  const shape = `${field} must be an ISO 8601 date (2027-03-31) or date-time with a time zone (2027-03-31T18:00:00Z)`;
  if (typeof value !== "string" || value.length > 40) throw invalid(shape);
  const date = DATE_ONLY.exec(value);
  if (date !== null) {
    const [y, m, d] = [Number(date[1]), Number(date[2]), Number(date[3])];
    const start = Date.UTC(y, m - 1, d);
    const check = new Date(start);
    if (check.getUTCFullYear() !== y || check.getUTCMonth() !== m - 1 || check.getUTCDate() !== d) {
      throw invalid(`${field} is not a real calendar date`);
    }
    return start + 24 * 60 * 60 * 1000 - 1;
  }
  const dt = DATE_TIME.exec(value);
  if (dt === null) throw invalid(shape);
  const [y, mo, d, h, mi, s] = [dt[1], dt[2], dt[3], dt[4], dt[5], dt[6] ?? "0"].map(Number) as number[];
  const naive = new Date(
    Date.UTC(y as number, (mo as number) - 1, d as number, h as number, mi as number, s as number),
  );
  if (
    naive.getUTCFullYear() !== y ||
    naive.getUTCMonth() !== (mo as number) - 1 ||
    naive.getUTCDate() !== d ||
    naive.getUTCHours() !== h ||
    naive.getUTCMinutes() !== mi ||
    naive.getUTCSeconds() !== s
  ) {
    throw invalid(`${field} is not a real calendar date and time`);
  }
  const parsed = Date.parse(value.toUpperCase());
  if (!Number.isFinite(parsed)) throw invalid(shape);
  return parsed;
}

export function futureInstant(value: unknown, field: string, now: number): number {
  const at = parseIsoInstant(value, field);
  if (at <= now) throw invalid(`${field} must be in the future`);
  return at;
}

const PUBLISH_FIELDS = [
  "statement",
  "criteria",
  "area",
  "budget",
  "hiddenLimit",
  "buyBy",
  "validUntil",
  "visibility",
];

export interface ValidPublish {
  statement: string;
  criteria?: Criteria;
  area: Area;
  budget?: Money;
  hiddenLimit?: HiddenLimit;
  buyBy?: number;
  validUntil: number;
  visibility: Visibility;
}

/** Consent-link rule 1: publish takes no contact field; anything undeclared is refused. */
export function validatePublish(input: unknown, now: number, config: HolderContext["config"]): ValidPublish {
  if (!isRecord(input)) throw invalid("the intent must be an object with at least a statement and an area");
  for (const key of Object.keys(input)) {
    if (!PUBLISH_FIELDS.includes(key)) {
      const contact = /mail|phone|name|contact|address/i.test(key)
        ? " (an intent takes no contact data: the person gives it on the holder's consent page)"
        : "";
      throw invalid(
        `the intent has no field "${key.slice(0, 40)}"${contact}; allowed fields: ${PUBLISH_FIELDS.join(", ")}`,
      );
    }
  }
  const statement = validateStatement(input.statement);
  const area = validateArea(input.area);
  const out: ValidPublish = {
    statement,
    area,
    validUntil: now + config.defaultValidityMs,
    visibility: "private",
  };
  if (input.criteria !== undefined) out.criteria = validateCriteria(input.criteria, now);
  if (input.budget !== undefined) out.budget = validateBudget(input.budget);
  if (input.hiddenLimit !== undefined) {
    out.hiddenLimit = {
      amount: validateHiddenLimit(input.hiddenLimit),
      currency: out.budget?.currency ?? COUNTRY_CURRENCY[area.country],
    };
  }
  if (input.validUntil !== undefined) {
    out.validUntil = futureInstant(input.validUntil, "validUntil", now);
    if (out.validUntil > now + config.maxValidityMs) {
      throw invalid(
        `validUntil must be at most ${Math.floor(config.maxValidityMs / 86_400_000)} days from now`,
      );
    }
  }
  if (input.buyBy !== undefined) out.buyBy = futureInstant(input.buyBy, "buyBy", now);
  if (input.visibility !== undefined) out.visibility = oneOf(input.visibility, VISIBILITIES, "visibility");
  return out;
}
