import { isRegionOf, OFFER_LIMITS } from "@doorbell/intents";
import type { CatalogueOfferInput, ReplyOfferInput } from "../model/services.js";
import { type Category, HolderError } from "../model/types.js";

/**
 * Offer validation with messages that name the field, the rule and (for numbers and enums) what
 * was given, e.g. `offers[3].price.amount must be a whole number from 1 to 1000000000000 (got -5)`.
 * Used by the offer service, the catalogue file parser and the MCP layer's reply tool.
 */

const CATEGORIES = ["vehicles", "property"] as const;
const COUNTRIES = ["SK", "CZ"] as const;
const CURRENCIES = ["EUR", "CZK"] as const;
export const FUELS = ["petrol", "diesel", "hybrid", "electric", "lpg"] as const;
export const KINDS = ["flat", "house", "land"] as const;

interface NumericAttribute {
  readonly category: Category;
  readonly integer: boolean;
  readonly min: number;
  readonly max: number;
}

/** The attributes the matching rule reads; any other key is free-form (a string or a number). */
const NUMERIC: Record<string, NumericAttribute> = {
  year: { category: "vehicles", integer: true, min: 1900, max: 2100 },
  mileageKm: { category: "vehicles", integer: true, min: 0, max: 5_000_000 },
  rooms: { category: "property", integer: true, min: 1, max: 100 },
  areaM2: { category: "property", integer: false, min: 1, max: 100_000_000 },
};
const TEXT: Record<string, { category: Category; values?: readonly string[] }> = {
  make: { category: "vehicles" },
  model: { category: "vehicles" },
  fuel: { category: "vehicles", values: FUELS },
  kind: { category: "property", values: KINDS },
};

const ATTRIBUTE_KEY = /^[A-Za-z][A-Za-z0-9_]{0,39}$/;
/** C0/C1 control characters other than tab and newline (which descriptions may contain). */
function hasControl(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09 && c !== 0x0a) || (c >= 0x7f && c <= 0x9f)) return true;
  }
  return false;
}
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

type Problems = string[];

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string")
    return value.length > 40 ? `"${value.slice(0, 37)}..."` : JSON.stringify(value);
  if (typeof value === "number") return String(value);
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

function oneOf(values: readonly string[]): string {
  return values.map((v) => `"${v}"`).join(", ");
}

function unknownKeys(
  value: Record<string, unknown>,
  allowed: readonly string[],
  path: string,
  problems: Problems,
) {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) {
      problems.push(
        `${path}${path ? "." : ""}${key} is not a field of an offer here (allowed: ${allowed.join(", ")})`,
      );
    }
  }
}

function text(
  value: unknown,
  path: string,
  max: number,
  problems: Problems,
  required: boolean,
): string | undefined {
  if (value === undefined) {
    if (required) problems.push(`${path} is required`);
    return undefined;
  }
  if (typeof value !== "string") {
    problems.push(`${path} must be a string (got ${describe(value)})`);
    return undefined;
  }
  const trimmed = value.trim();
  if (trimmed === "") {
    problems.push(`${path} must not be empty`);
    return undefined;
  }
  if (trimmed.length > max) {
    problems.push(`${path} must be at most ${max} characters (got ${trimmed.length})`);
    return undefined;
  }
  if (hasControl(trimmed)) {
    problems.push(`${path} must not contain control characters`);
    return undefined;
  }
  return trimmed;
}

function enumValue<T extends string>(
  value: unknown,
  path: string,
  values: readonly T[],
  problems: Problems,
): T | undefined {
  if (value === undefined) {
    problems.push(`${path} is required (one of ${oneOf(values)})`);
    return undefined;
  }
  if (typeof value !== "string" || !values.includes(value as T)) {
    problems.push(`${path} must be one of ${oneOf(values)} (got ${describe(value)})`);
    return undefined;
  }
  return value as T;
}

function at(path: string, key: string): string {
  return path === "" ? key : `${path}.${key}`;
}

interface Common {
  title: string;
  description?: string;
  category: Category;
  price: { amount: number; currency: "EUR" | "CZK" };
  location: { country: "SK" | "CZ"; region?: string };
  url?: string;
  attributes: Record<string, string | number>;
}

function common(value: Record<string, unknown>, path: string, problems: Problems): Common | undefined {
  const before = problems.length;
  const title = text(value.title, at(path, "title"), OFFER_LIMITS.titleMax, problems, true);
  const description = text(
    value.description,
    at(path, "description"),
    OFFER_LIMITS.descriptionMax,
    problems,
    false,
  );
  const category = enumValue(value.category, at(path, "category"), CATEGORIES, problems);

  let price: Common["price"] | undefined;
  const pricePath = at(path, "price");
  if (!isObject(value.price)) {
    problems.push(`${pricePath} is required: an object { amount, currency } (got ${describe(value.price)})`);
  } else {
    unknownKeys(value.price, ["amount", "currency"], pricePath, problems);
    const amount = value.price.amount;
    const ok =
      typeof amount === "number" &&
      Number.isSafeInteger(amount) &&
      amount >= 1 &&
      amount <= OFFER_LIMITS.priceMax;
    if (!ok) {
      problems.push(
        `${pricePath}.amount must be a whole number from 1 to ${OFFER_LIMITS.priceMax} (whole currency units; got ${describe(amount)})`,
      );
    }
    const currency = enumValue(value.price.currency, `${pricePath}.currency`, CURRENCIES, problems);
    if (ok && currency) price = { amount: amount as number, currency };
  }

  let location: Common["location"] | undefined;
  const locationPath = at(path, "location");
  if (!isObject(value.location)) {
    problems.push(
      `${locationPath} is required: an object { country, region? } (got ${describe(value.location)})`,
    );
  } else {
    unknownKeys(value.location, ["country", "region"], locationPath, problems);
    const country = enumValue(value.location.country, `${locationPath}.country`, COUNTRIES, problems);
    const region = value.location.region;
    if (region !== undefined && (typeof region !== "string" || (country && !isRegionOf(region, country)))) {
      problems.push(
        `${locationPath}.region must be an ISO 3166-2 region code of ${country ?? "the country"} such as ${country === "CZ" ? '"CZ-10"' : '"SK-BL"'} (got ${describe(region)})`,
      );
    } else if (country) {
      location = { country, ...(typeof region === "string" ? { region } : {}) };
    }
  }

  let url: string | undefined;
  if (value.url !== undefined) {
    const raw = text(value.url, at(path, "url"), OFFER_LIMITS.urlMax, problems, false);
    if (raw !== undefined) {
      let parsed: URL | undefined;
      try {
        parsed = new URL(raw);
      } catch {
        parsed = undefined;
      }
      if (parsed === undefined || (parsed.protocol !== "https:" && parsed.protocol !== "http:")) {
        problems.push(`${at(path, "url")} must be an absolute http or https URL (got ${describe(raw)})`);
      } else {
        url = raw;
      }
    }
  }

  const attributes = validateAttributes(value.attributes, at(path, "attributes"), category, problems);
  if (problems.length > before || !title || !category || !price || !location || !attributes) return undefined;
  return {
    title,
    ...(description !== undefined ? { description } : {}),
    category,
    price,
    location,
    ...(url !== undefined ? { url } : {}),
    attributes,
  };
}

function validateAttributes(
  value: unknown,
  path: string,
  category: Category | undefined,
  problems: Problems,
): Record<string, string | number> | undefined {
  if (value === undefined) return {};
  if (!isObject(value)) {
    problems.push(`${path} must be an object of names to strings or numbers (got ${describe(value)})`);
    return undefined;
  }
  const keys = Object.keys(value);
  if (keys.length > OFFER_LIMITS.attributesMax) {
    problems.push(`${path} may have at most ${OFFER_LIMITS.attributesMax} entries (got ${keys.length})`);
    return undefined;
  }
  const before = problems.length;
  const out: Record<string, string | number> = {};
  for (const key of keys) {
    const item = value[key];
    const itemPath = `${path}.${key}`;
    if (!ATTRIBUTE_KEY.test(key)) {
      problems.push(
        `${path} has an invalid name ${describe(key)}: a letter, then letters, digits or _ (at most 40)`,
      );
      continue;
    }
    // Own keys only: "constructor" or "toString" is a plain attribute name, not Object.prototype's.
    const numeric = Object.hasOwn(NUMERIC, key) ? NUMERIC[key] : undefined;
    const textual = Object.hasOwn(TEXT, key) ? TEXT[key] : undefined;
    const rule = numeric ?? textual;
    if (rule && category && rule.category !== category) {
      problems.push(`${itemPath} applies to ${rule.category} offers, not ${category}`);
      continue;
    }
    if (numeric) {
      const ok =
        typeof item === "number" &&
        Number.isFinite(item) &&
        (!numeric.integer || Number.isInteger(item)) &&
        item >= numeric.min &&
        item <= numeric.max;
      if (!ok) {
        problems.push(
          `${itemPath} must be a ${numeric.integer ? "whole number" : "number"} from ${numeric.min} to ${numeric.max} (got ${describe(item)})`,
        );
      } else {
        out[key] = item;
      }
      continue;
    }
    if (textual) {
      if (textual.values) {
        const v = enumValue(item, itemPath, textual.values, problems);
        if (v) out[key] = v;
      } else {
        const v = text(item, itemPath, OFFER_LIMITS.attributeTextMax, problems, true);
        if (v) out[key] = v;
      }
      continue;
    }
    if (typeof item === "number" && Number.isFinite(item)) out[key] = item;
    else if (typeof item === "string") {
      const v = text(item, itemPath, OFFER_LIMITS.attributeTextMax, problems, true);
      if (v) out[key] = v;
    } else problems.push(`${itemPath} must be a string or a finite number (got ${describe(item)})`);
  }
  return problems.length > before ? undefined : out;
}

function dateTime(value: unknown, path: string, problems: Problems): string | undefined {
  if (typeof value !== "string" || !ISO_DATE_TIME.test(value) || Number.isNaN(Date.parse(value))) {
    problems.push(
      `${path} must be an ISO 8601 date-time with a time zone, e.g. "2026-11-30T12:00:00Z" (got ${describe(value)})`,
    );
    return undefined;
  }
  return new Date(Date.parse(value)).toISOString();
}

const CATALOGUE_FIELDS = [
  "source",
  "title",
  "description",
  "category",
  "price",
  "location",
  "url",
  "attributes",
  "publishedAt",
] as const;
const REPLY_FIELDS = [
  "source",
  "inReplyTo",
  "title",
  "description",
  "category",
  "price",
  "location",
  "url",
  "attributes",
] as const;

export interface Checked<T> {
  value?: T;
  problems: string[];
}

/** A catalogue offer, normalised (trimmed text, canonical publishedAt), or every problem found. */
export function checkCatalogueOffer(value: unknown, path = "offer"): Checked<CatalogueOfferInput> {
  const problems: Problems = [];
  if (!isObject(value))
    return { problems: [`${path || "the offer"} must be an object (got ${describe(value)})`] };
  unknownKeys(value, CATALOGUE_FIELDS, path, problems);
  let source: CatalogueOfferInput["source"] | undefined;
  const sourcePath = at(path, "source");
  if (!isObject(value.source)) {
    problems.push(
      `${sourcePath} is required: { kind: "catalogue", ref, seller? } (got ${describe(value.source)})`,
    );
  } else {
    unknownKeys(value.source, ["kind", "ref", "seller"], sourcePath, problems);
    if (value.source.kind !== "catalogue") {
      problems.push(
        `${sourcePath}.kind must be "catalogue" for a catalogue offer (got ${describe(value.source.kind)})`,
      );
    }
    const ref = text(value.source.ref, `${sourcePath}.ref`, OFFER_LIMITS.refMax, problems, true);
    const seller = text(value.source.seller, `${sourcePath}.seller`, OFFER_LIMITS.sellerMax, problems, false);
    if (ref !== undefined) source = { kind: "catalogue", ref, ...(seller !== undefined ? { seller } : {}) };
  }
  const rest = common(value, path, problems);
  // Optional: an offer that gives none is published when the holder first sees it, and keeps that
  // time on every later import (an unchanged row is unchanged).
  const publishedAt =
    value.publishedAt === undefined
      ? undefined
      : dateTime(value.publishedAt, at(path, "publishedAt"), problems);
  if (problems.length > 0 || !rest || !source || (value.publishedAt !== undefined && !publishedAt))
    return { problems };
  return { value: { ...rest, source, ...(publishedAt === undefined ? {} : { publishedAt }) }, problems };
}

/** A seller's reply, normalised, or every problem found. */
export function checkReplyOffer(value: unknown, path = "offer"): Checked<ReplyOfferInput> {
  const problems: Problems = [];
  if (!isObject(value))
    return { problems: [`${path || "the offer"} must be an object (got ${describe(value)})`] };
  unknownKeys(value, REPLY_FIELDS, path, problems);
  let source: ReplyOfferInput["source"] | undefined;
  const sourcePath = at(path, "source");
  if (!isObject(value.source)) {
    problems.push(
      `${sourcePath} is required: { kind: "reply", ref?, seller? } (got ${describe(value.source)})`,
    );
  } else {
    unknownKeys(value.source, ["kind", "ref", "seller"], sourcePath, problems);
    if (value.source.kind !== "reply") {
      problems.push(
        `${sourcePath}.kind must be "reply" for a seller's reply (got ${describe(value.source.kind)})`,
      );
    }
    const ref = text(value.source.ref, `${sourcePath}.ref`, OFFER_LIMITS.refMax, problems, false);
    const seller = text(value.source.seller, `${sourcePath}.seller`, OFFER_LIMITS.sellerMax, problems, false);
    source = {
      kind: "reply",
      ...(ref !== undefined ? { ref } : {}),
      ...(seller !== undefined ? { seller } : {}),
    };
  }
  const inReplyTo = text(value.inReplyTo, at(path, "inReplyTo"), 200, problems, true);
  const rest = common(value, path, problems);
  if (problems.length > 0 || !rest || !source || !inReplyTo) return { problems };
  return { value: { ...rest, source, inReplyTo }, problems };
}

function refuse(problems: readonly string[]): never {
  const shown = problems.slice(0, 5).join("; ");
  const more = problems.length > 5 ? `; and ${problems.length - 5} more` : "";
  throw new HolderError("ERR_HOLDER_INVALID", `${shown}${more}`);
}

/** Validates a whole import: every offer, and no source.ref twice. Throws ERR_HOLDER_INVALID. */
export function validateCatalogueOffers(offers: readonly unknown[]): CatalogueOfferInput[] {
  if (!Array.isArray(offers)) refuse(["offers must be an array of catalogue offers"]);
  const problems: string[] = [];
  const out: CatalogueOfferInput[] = [];
  const seen = new Map<string, number>();
  offers.forEach((offer, index) => {
    const checked = checkCatalogueOffer(offer, `offers[${index}]`);
    problems.push(...checked.problems);
    if (!checked.value) return;
    const first = seen.get(checked.value.source.ref);
    if (first !== undefined) {
      problems.push(
        `offers[${index}].source.ref ${describe(checked.value.source.ref)} repeats offers[${first}]`,
      );
      return;
    }
    seen.set(checked.value.source.ref, index);
    out.push(checked.value);
  });
  if (problems.length > 0) refuse(problems);
  return out;
}

export function validateReplyOffer(offer: unknown): ReplyOfferInput {
  const checked = checkReplyOffer(offer, "offer");
  if (!checked.value) refuse(checked.problems);
  return checked.value;
}
