// The limits the binding's tools publish in their schemas; the holder checks the same numbers again.
import type { Country } from "./types.js";

/** The longest statement an intent may have, in characters. */
export const STATEMENT_MAX = 2000;

/** What one offer may carry (intent_submit_offer and catalogue rows). */
export const OFFER_LIMITS = {
  titleMax: 200,
  descriptionMax: 5_000,
  refMax: 200,
  sellerMax: 200,
  urlMax: 2_000,
  priceMax: 1_000_000_000_000,
  attributesMax: 30,
  attributeTextMax: 200,
} as const;

/** The regions (ISO 3166-2 first-level subdivisions) a buyer may narrow an area to. */
export const AREA_REGIONS: Readonly<Record<Country, readonly string[]>> = {
  SK: ["SK-BC", "SK-BL", "SK-KI", "SK-NI", "SK-PV", "SK-TA", "SK-TC", "SK-ZI"],
  CZ: [
    "CZ-10",
    "CZ-20",
    "CZ-31",
    "CZ-32",
    "CZ-41",
    "CZ-42",
    "CZ-51",
    "CZ-52",
    "CZ-53",
    "CZ-63",
    "CZ-64",
    "CZ-71",
    "CZ-72",
    "CZ-80",
  ],
};
