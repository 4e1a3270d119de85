import type { DemandGrid } from "@doorbell/intents";
import type { Kysely } from "@doorbell/store";
import type { Lang } from "./languages.js";
import type { HolderTables } from "./tables.js";
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

/** What the assistant learns: the date offered, and that the person decides. */
export interface RenewalOffer {
  validUntil: string;
  status: "offered-to-person";
}

/**
 * The services the MCP tools and the pages call. Each method validates its own input (the MCP
 * layer validates shapes first) and refuses with `HolderError`; none returns a contact, a hidden
 * limit, a token or a code except `publish`, which returns the new intentCode once.
 */
export interface IntentService {
  /** Consent-link rule 1: a draft, never matched or counted, expiring within 24 h. */
  publish(input: PublishInput): Promise<PublishResult>;
  /**
   * Publishes for a signed-in person (OAuth principal with intents:manage): active at
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
  /**
   * Renewing validUntil needs the person's fresh action: a signed-in assistant can only offer it,
   * and the holder mails the person the manage page with that date.
   */
  offerRenewal(principal: Principal, id: string, validUntil: string): Promise<RenewalOffer>;
  /** Takes effect immediately (binding: MUST). */
  withdraw(principal: Principal, id?: string): Promise<{ status: "withdrawn" }>;
  /**
   * Expires drafts past 24 h and intents past validUntil; returns how many changed. Once `signal`
   * aborts (this process no longer leads the background work), no further batch is started.
   */
  expireDue(signal?: AbortSignal): Promise<number>;
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
  /**
   * What the consent page shows for a token: the statement, whether a limit is set, the consent
   * text. With a language: that language's text and version (the English one when it has none),
   * and `consentLanguage` saying which it is.
   */
  consentView(consentToken: string, lang?: Lang): Promise<ConsentView>;
  /**
   * Stores the person's e-mail (sealed) and sends the double opt-in mail; first-come (rule 3).
   * `consentVersion`: the text the person agreed to (a current version in any language; the
   * English one when not given). It is what the intent records, and the person's mails are
   * written in its language.
   */
  giveConsent(
    consentToken: string,
    input: { email: string; accepted: boolean; consentVersion?: string },
  ): Promise<{ sentTo: "your e-mail" }>;
  /**
   * Where a confirmation link stands, without using it: `confirmed` (already used), `ended` (the
   * intent expired or was withdrawn), `open`, or `unknown`.
   */
  confirmState(confirmToken: string): Promise<"open" | "confirmed" | "ended" | "unknown">;
  /** The link in the confirmation mail: activates the intent and starts matching. */
  confirmEmail(confirmToken: string): Promise<Intent>;
  /** The manage page of every e-mail: the intent and its matches. */
  manageView(manageToken: string): Promise<{ intent: Intent; matches: Match[] }>;
  /** Withdraw in one action from the manage page. */
  withdrawByManageToken(manageToken: string): Promise<Intent>;
  /**
   * The person renews validUntil from the manage page (push profile: renewal "requires the buyer's
   * fresh action"): a date (end of that day, UTC) or date-time, in the future, within the longest
   * validity. Only while the intent is active.
   */
  renewByManageToken?(manageToken: string, validUntil: string): Promise<Intent>;
}

export type ConsentView =
  | { state: "open"; intent: Intent; consentText: string; consentVersion: string; consentLanguage?: Lang }
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
  /**
   * Inserts or updates catalogue offers by source.ref and matches new ones against active intents.
   * An array is checked whole before anything is written; a stream (a large file, checked first by
   * its reader) is checked and written a batch at a time, its matches told once at the end.
   */
  importCatalogue(
    offers: readonly CatalogueOfferInput[] | AsyncIterable<CatalogueOfferInput>,
  ): Promise<{ inserted: number; updated: number; matched: number }>;
  /** A seller's reply to a pseudonymous intent; the seller never learns anything about the buyer. */
  submitReply(offer: ReplyOfferInput): Promise<{ accepted: boolean }>;
  /** The holder's ordinary catalogue search (full text), newest first. */
  search(statement: string, limit: number): Promise<Offer[]>;
}

export type CatalogueOfferInput = Omit<Offer, "id" | "source" | "inReplyTo" | "publishedAt"> & {
  source: { kind: "catalogue"; ref: string; seller?: string };
  /** When the catalogue published it; without it, when the holder first saw it (kept on re-import). */
  publishedAt?: string;
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

/**
 * The matches one write makes, counted rather than listed: one import at 1,000,000 intents finds
 * millions, and an id per match cost more than finding them. What is told is who matched.
 */
export interface FoundMatches {
  /** When all of them are delivered (ms since the epoch), as a read will show it. */
  readonly deliveredAt: number;
  /** How many (offer, intent) matches in all. */
  readonly count: number;
  /** The intents with at least one of them, each once. */
  readonly intents: readonly string[];
  /** The intents among them not yet reported in the same round (see `newRound`). */
  readonly firstInRound: readonly string[];
}

/**
 * The port matching writes through inside the offers' transaction: the push profile implements it
 * (one outbox row per subscription), so no match is committed without its doorbell and matching
 * needs to know nothing of push.
 */
export interface MatchSink {
  /** Inside the transaction that recorded matches: one matches doorbell per subscription. */
  enqueueMatches(trx: Kysely<HolderTables>, found: FoundMatches): Promise<void>;
  /**
   * Rings the intent's live subscriptions for its matches no doorbell counted yet; the caller
   * holds the arrivals lock. Returns how many matches were counted.
   */
  catchUpMatches(trx: Kysely<HolderTables>, intentId: string): Promise<number>;
}
