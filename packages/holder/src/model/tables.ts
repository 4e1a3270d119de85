/**
 * The holder's own tables as Kysely sees them: the row shapes every part reads and writes. The
 * migrations that create them sit in app/migrations.ts, above the catalogue whose search index they
 * build.
 */
import type { Generated } from "@doorbell/store";
import type { Category, Country, Currency, IntentStatus, Visibility } from "./types.js";

/** An intent row. Secrets are sealed, codes and tokens are keyed hashes (consent-link rules 2, 4, 5). */
export interface IntentRow {
  id: string;
  /** Keyed hash of the intentCode the agent holds. */
  code_hash: string;
  /** Keyed hash of the token in the consentUrl (first-come: cleared once consent is given). */
  consent_token_hash: string | null;
  /** Keyed hash of the token in the double opt-in e-mail. */
  confirm_token_hash: string | null;
  /** Keyed hash of the token in the manage link of every e-mail. */
  manage_token_hash: string | null;
  status: IntentStatus;
  statement: string;
  criteria_json: string | null;
  category: Category | null;
  country: Country;
  region: string | null;
  budget_amount: number | null;
  budget_currency: Currency | null;
  hidden_limit_sealed: string | null;
  buy_by: number | null;
  valid_until: number;
  visibility: Visibility;
  /** Shown to sellers of pseudonymous intents instead of anything about the buyer. */
  pseudonym: string | null;
  contact_sealed: string | null;
  /** Keyed hash of the normalised e-mail, to find a person's intents without opening contacts. */
  contact_hash: string | null;
  consent_version: string | null;
  draft_expires_at: number | null;
  confirm_expires_at: number | null;
  created_at: number;
  updated_at: number;
  consented_at: number | null;
  confirmed_at: number | null;
  ended_at: number | null;
  /** The last offer (match_seq) that entered matching before the intent was withdrawn. */
  ended_seq: number | null;
  /**
   * When the intent's current criteria and budget took effect (activation or a change of them):
   * offers already there count as delivered at this moment. Null while the intent was never active.
   */
  matching_since: number | null;
  /** The e-mail digest's watermark: the position (deliveredAt, match_seq) of the last match mailed. */
  mailed_at: number | null;
  mailed_seq: number | null;
  /** When the last digest was sent (ms): a later match waits for the end of the window. */
  digested_at: number | null;
  /** When a digest that waited is due (ms); null when none waits. The holder's minute timer mails it. */
  digest_due_at: number | null;
  /**
   * A read's note (matching/reader.ts): for the criteria of `scan_since`, no match after the
   * position (scan_newest_at, scan_newest_seq) up to the arrival (scan_to_at, scan_to_seq).
   */
  scan_since: number | null;
  scan_newest_at: number | null;
  scan_newest_seq: number | null;
  scan_to_at: number | null;
  scan_to_seq: number | null;
}

/** The matching columns of an intent no one has read yet (its matching_since set when active). */
export const FRESH_MATCHING_STATE = {
  matching_since: null,
  ended_seq: null,
  mailed_at: null,
  mailed_seq: null,
  digested_at: null,
  digest_due_at: null,
  scan_since: null,
  scan_newest_at: null,
  scan_newest_seq: null,
  scan_to_at: null,
  scan_to_seq: null,
} as const satisfies Partial<IntentRow>;

export interface OfferRow {
  id: string;
  source_kind: "catalogue" | "reply";
  source_ref: string | null;
  seller: string | null;
  in_reply_to: string | null;
  title: string;
  description: string | null;
  category: Category;
  price_amount: number;
  price_currency: Currency;
  country: Country;
  region: string | null;
  url: string | null;
  attributes_json: string;
  published_at: number;
  created_at: number;
  withdrawn_at: number | null;
  /** When the offer, new or changed, entered matching (a match's deliveredAt is never earlier). */
  matched_at: number;
  /** Its place in the order offers entered matching: ties of matched_at are broken by it. */
  match_seq: number;
}

/** The local mailbox used when no SMTP server is configured: the person reads it on a dev page. */
export interface MailRow {
  id: Generated<number>;
  to_sealed: string;
  subject: string;
  text_body: string;
  html_body: string;
  created_at: number;
}

export interface HolderTables {
  holder_intents: IntentRow;
  holder_offers: OfferRow;
  holder_mail: MailRow;
}
