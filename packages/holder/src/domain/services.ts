import type {
  Criteria,
  DemandCell,
  DemandSummary,
  Intent,
  Match,
  Offer,
  Principal,
  PublishInput,
  PublishResult,
} from "./types.js";

/**
 * The services the MCP tools and the pages call. Each method validates its own input (the MCP
 * layer validates shapes first) and refuses with `HolderError`; none returns a contact, a hidden
 * limit, a token or a code except `publish`, which returns the new intentCode once.
 */
export interface IntentService {
  /** Consent-link rule 1: a draft, never matched or counted, expiring within 24 h. */
  publish(input: PublishInput): Promise<PublishResult>;
  /**
   * Issue #8: publishes for a signed-in person (OAuth principal with intents:manage): active at
   * once, their verified sign-in address as the (sealed) contact, no consent link.
   */
  publishSignedIn?(principal: Principal, input: PublishInput): Promise<Omit<PublishResult, "consentUrl">>;
  /** The principal an intentCode stands for, or undefined (unknown, expired draft codes included). */
  principalForCode(intentCode: string): Promise<Principal | undefined>;
  /** `id` may be omitted when the principal is an intentCode (it names one intent). */
  get(principal: Principal, id?: string): Promise<Intent>;
  /**
   * The id of the intent this principal may read (its code's intent, or a signed-in client's own
   * one under intents:read), refused as `get` refuses; nothing is loaded.
   */
  readableIntent(principal: Principal, id?: string): Promise<string>;
  /** OAuth principals only (consent-link rule 4 grants get, list_matches and withdraw). */
  update(principal: Principal, id: string, changes: IntentChanges): Promise<Intent>;
  /** Takes effect immediately (binding: MUST). */
  withdraw(principal: Principal, id?: string): Promise<{ status: "withdrawn" }>;
  /** Expires drafts past 24 h and intents past validUntil; returns how many changed. */
  expireDue(): Promise<number>;
}

export interface IntentChanges {
  statement?: string;
  criteria?: Criteria;
  budget?: { amount: number; currency: "EUR" | "CZK" };
  hiddenLimit?: number | null;
  buyBy?: string | null;
}

/** The person's side of consent-link, behind the holder's own pages (rules 2, 3, 5). */
export interface ConsentService {
  /** What the consent page shows for a token: the statement, whether a limit is set, the consent text. */
  consentView(consentToken: string): Promise<ConsentView>;
  /** Stores the person's e-mail (sealed) and sends the double opt-in mail; first-come (rule 3). */
  giveConsent(
    consentToken: string,
    input: { email: string; accepted: boolean },
  ): Promise<{ sentTo: "your e-mail" }>;
  /** The link in the confirmation mail: activates the intent and starts matching. */
  confirmEmail(confirmToken: string): Promise<Intent>;
  /** The manage page of every e-mail: the intent and its matches. */
  manageView(manageToken: string): Promise<{ intent: Intent; matches: Match[] }>;
  /** Withdraw in one action from the manage page. */
  withdrawByManageToken(manageToken: string): Promise<Intent>;
}

export type ConsentView =
  | { state: "open"; intent: Intent; consentText: string; consentVersion: string }
  | { state: "taken" | "expired" | "unknown" };

export interface MatchService {
  /**
   * Matches delivered for an intent, oldest first, strictly after `since` (ISO) when given. One
   * answer holds at most about 1,000 (never splitting matches that share a deliveredAt); `more`
   * is true when a call with `since` = the last deliveredAt has more.
   */
  listMatches(
    principal: Principal,
    id?: string,
    since?: string,
  ): Promise<{ matches: Match[]; more?: boolean }>;
}

export interface OfferService {
  /** Inserts or updates catalogue offers by source.ref and matches new ones against active intents. */
  importCatalogue(
    offers: readonly CatalogueOfferInput[],
  ): Promise<{ inserted: number; updated: number; matched: number }>;
  /** A seller's reply to a pseudonymous intent; the seller never learns anything about the buyer. */
  submitReply(offer: ReplyOfferInput): Promise<{ accepted: boolean }>;
  /** The holder's ordinary catalogue search (full text), newest first. */
  search(statement: string, limit: number): Promise<Offer[]>;
}

export type CatalogueOfferInput = Omit<Offer, "id" | "source" | "inReplyTo"> & {
  source: { kind: "catalogue"; ref: string; seller?: string };
};
export type ReplyOfferInput = Omit<Offer, "id" | "publishedAt" | "source"> & {
  source: { kind: "reply"; ref?: string; seller?: string };
  inReplyTo: string;
};

export interface DemandService {
  /** The published band grid (so sellers know which cells exist). */
  grid(): DemandGrid;
  /** One cell; withheld below the k-anonymity threshold. Drafts are never counted (rule 1). */
  summary(cell: DemandCell): Promise<DemandSummary>;
}

export interface DemandGrid {
  threshold: number;
  categories: readonly string[];
  countries: readonly string[];
  /** The regions (ISO 3166-2) a cell may name, per country. */
  regions: Readonly<Record<string, readonly string[]>>;
  budgetBands: readonly { id: string; currency: string; min: number; max: number | null }[];
}
