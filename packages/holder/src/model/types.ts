/**
 * The holder's domain contract: the shapes every part shares (tools, pages, matching, mail) and
 * the service interface the MCP tools and the pages call. The Isto chapters that define Intent,
 * Offer and DemandSummary are not public, so these shapes are Doorbell's (docs/decisions.md).
 */
import { CodedError } from "@doorbell/errors";

export type Country = "SK" | "CZ";
export type Category = "vehicles" | "property";
export type Currency = "EUR" | "CZK";

export type IntentStatus =
  | "awaiting_consent"
  | "awaiting_email_confirmation"
  | "active"
  | "expired"
  | "withdrawn";
export type Visibility = "private" | "pseudonymous";

/** Where the buyer looks: a country, optionally one region of it (ISO 3166-2 code, e.g. "SK-BL"). */
export interface Area {
  country: Country;
  region?: string;
}

/** Whole currency units (no minor units for cars and flats). */
export interface Money {
  amount: number;
  currency: Currency;
}

/**
 * What the buyer wants beyond the category: every given field must hold for an offer to match.
 * Vehicles: make, model, yearMin, mileageMaxKm, fuel. Property: kind, roomsMin, areaMinM2.
 */
export interface Criteria {
  category: Category;
  make?: string;
  model?: string;
  yearMin?: number;
  mileageMaxKm?: number;
  fuel?: "petrol" | "diesel" | "hybrid" | "electric" | "lpg";
  kind?: "flat" | "house" | "land";
  roomsMin?: number;
  areaMinM2?: number;
}

/** An intent as tools and pages show it: never the contact, the hidden limit or any token. */
export interface Intent {
  id: string;
  status: IntentStatus;
  statement: string;
  criteria?: Criteria;
  area: Area;
  budget?: Money;
  hasHiddenLimit: boolean;
  buyBy?: string;
  validUntil: string;
  visibility: Visibility;
  createdAt: string;
  /** While awaiting consent: the draft's end (at most 24 h after it was published). */
  draftExpiresAt?: string;
}

export interface OfferSource {
  /** `catalogue`: imported from the holder's catalogue; `reply`: a seller's answer to one intent. */
  kind: "catalogue" | "reply";
  /** The catalogue's own id of the listing (catalogue) or the seller's reference (reply). */
  ref?: string;
  seller?: string;
}

export interface Offer {
  id: string;
  source: OfferSource;
  /** For replies: the intent answered. */
  inReplyTo?: string;
  title: string;
  description?: string;
  category: Category;
  price: Money;
  location: Area;
  url?: string;
  /** Category attributes: make, model, year, mileageKm, fuel / kind, rooms, areaM2. */
  attributes: Record<string, string | number>;
  publishedAt: string;
}

export interface Match {
  offer: Offer;
  deliveredAt: string;
}

/** One cell of the band grid: category × area (country or region) × budget band. */
export interface DemandCell {
  category: Category;
  country: Country;
  region?: string;
  /** Band id from the published grid, e.g. "EUR-10000-20000". */
  budgetBand: string;
}

export type DemandSummary =
  | { withheld: false; cell: DemandCell; activeIntents: number; asOf: string }
  | { withheld: true; cell: DemandCell; reason: "below-threshold"; asOf: string };

/**
 * Who a buyer tool acts for: the holder of an intentCode (consent-link profile rule 4) or a
 * signed-in person (OAuth, a later issue). Every buyer tool goes through this one seam.
 */
export type Principal =
  | { kind: "intent-code"; intentId: string }
  /** `scopes`: what the token allows (issue #8: intents:read, intents:manage); absent = none. */
  | { kind: "oauth"; subject: string; clientId: string; scopes?: readonly string[] };

export interface PublishInput {
  statement: string;
  criteria?: Criteria;
  area: Area;
  budget?: Money;
  /** A plain number in the budget's currency; sealed on receipt, never shown again. */
  hiddenLimit?: number;
  buyBy?: string;
  validUntil?: string;
  visibility?: Visibility;
}

export interface PublishResult {
  intent: Intent;
  /** Consent-link profile rule 2: ≥ 128 random bits; shown once, stored only as a keyed hash. */
  intentCode: string;
  consentUrl: string;
}

/** A domain refusal: a stable code and plain words, mapped to a tool error by the MCP layer. */
export type HolderErrorCode =
  | "ERR_HOLDER_NOT_FOUND"
  | "ERR_HOLDER_FORBIDDEN"
  | "ERR_HOLDER_INVALID"
  | "ERR_HOLDER_CONFLICT"
  | "ERR_HOLDER_GONE"
  | "ERR_HOLDER_RATE_LIMITED"
  /** A service the holder needs (the mail server) failed; nothing was changed; try again later. */
  | "ERR_HOLDER_UNAVAILABLE";

export class HolderError extends CodedError<HolderErrorCode> {
  override readonly name = "HolderError";
}
