import type { RECORD_PROFILE } from "../constants.js";
import type { Authority, Money, QuotedItem, Slot } from "../message/types.js";

export const RECORD_KINDS = ["two_signatures", "our_signature", "their_reply"] as const;
/**
 * two_signatures: both messages signed and checked. our_signature: the other side's offer could
 * not be checked; we accepted and signed. their_reply: a person answered our offer in words and
 * the owner counted it.
 */
export type RecordKind = (typeof RECORD_KINDS)[number];

export interface RecordParty {
  readonly role: "offerer" | "accepter";
  readonly party?: string;
  readonly address: string;
  readonly org_name: string;
  /** The thumbprint of the key that signed this side's message, when it signed. */
  readonly kid?: string;
  readonly authority?: Authority;
}

/** A message as held in a record: its compact JWS, or its canonical JSON when unsigned. */
export type RecordedMessage =
  | { readonly jws: string; readonly hash: string }
  | { readonly json: string; readonly hash: string };

export interface RecordedReply {
  /** SHA-256 of the person's reply as received (the raw message bytes). */
  readonly hash: string;
  /** The Authentication-Results value the receiving server added. */
  readonly authentication_results: string;
  readonly received_at: number;
  /** For times: the index of the slot the person chose. */
  readonly slot?: number;
}

export interface QuoteTerms {
  readonly items: readonly QuotedItem[];
  readonly total: Money;
  readonly delivery_by?: string;
}

export interface TimeTerms {
  readonly slot: Slot;
  readonly purpose?: string;
  readonly location?: string;
}

export type Terms = QuoteTerms | TimeTerms;

export interface UnsealedRecord {
  readonly profile: typeof RECORD_PROFILE;
  readonly id: string;
  readonly thread: string;
  readonly kind: RecordKind;
  readonly parties: readonly [RecordParty, RecordParty];
  readonly offer: RecordedMessage;
  readonly acceptance?: RecordedMessage;
  readonly reply?: RecordedReply;
  readonly terms: Terms;
  /** When the acceptance was signed (its iat), or the reply received. */
  readonly agreed_at: number;
  readonly chain: readonly string[];
  readonly offer_current: boolean;
  /**
   * When the seal was made: the sealing key is judged at this time. Doorbell's addition, so a
   * record from another implementation may lack it; then the key is judged at `agreed_at`.
   */
  readonly sealed_at?: number;
}

export interface AgreementRecord extends UnsealedRecord {
  /** JWS, typ agent-agreement+jws, over the canonical record without `seal`. */
  readonly seal: string;
}
