import { CodedError } from "@doorbell/errors";
/**
 * Stable codes, one per way a message, a signature, a key page or a record can be refused.
 * Messages are plain words and never carry key material.
 */
export type AgreementErrorCode =
  // canonical form and JSON
  | "ERR_JSON_INVALID"
  | "ERR_JSON_DUPLICATE_MEMBER"
  | "ERR_CANONICAL_INPUT"
  | "ERR_NOT_CANONICAL"
  // messages
  | "ERR_MESSAGE_TOO_LARGE"
  | "ERR_MESSAGE_PROFILE"
  | "ERR_MESSAGE_INVALID"
  // signatures
  | "ERR_JWS_INVALID"
  | "ERR_JWS_HEADER"
  | "ERR_JWS_SIGNATURE"
  | "ERR_KEY_INVALID"
  // key pages and the trust rule
  | "ERR_JKU_UNTRUSTED"
  | "ERR_KEY_PAGE_UNAVAILABLE"
  /** The key page could not be reached (network, timeout, server error): the record could not be checked. */
  | "ERR_KEY_PAGE_UNREACHABLE"
  | "ERR_KEY_PAGE_INVALID"
  | "ERR_SENDER_NOT_LISTED"
  | "ERR_KEY_NOT_FOUND"
  | "ERR_KEY_REVOKED"
  | "ERR_KEY_RETIRED"
  | "ERR_KEY_NOT_YET_VALID"
  // the offer lifecycle
  | "ERR_OFFER_UNKNOWN"
  | "ERR_OFFER_NOT_OPEN"
  | "ERR_OFFER_EXPIRED"
  | "ERR_OFFER_REPLACED"
  | "ERR_THREAD_MISMATCH"
  | "ERR_WRONG_SENDER"
  | "ERR_WRONG_RECIPIENT"
  | "ERR_PREV_MISMATCH"
  | "ERR_SLOT_INVALID"
  | "ERR_DUPLICATE_MESSAGE"
  // records
  | "ERR_RECORD_TOO_LARGE"
  | "ERR_RECORD_PROFILE"
  | "ERR_RECORD_INVALID"
  | "ERR_RECORD_HASH"
  | "ERR_RECORD_TERMS"
  | "ERR_RECORD_BINDING"
  | "ERR_RECORD_CHAIN"
  | "ERR_RECORD_SEAL";

export class AgreementError extends CodedError<AgreementErrorCode> {
  override readonly name = "AgreementError";
  /** One plain line per further thing that failed (e.g. each schema violation); never key material. */
  readonly details: readonly string[];

  constructor(code: AgreementErrorCode, message: string, details: readonly string[] = []) {
    super(code, message);
    this.details = details;
  }
}

export const isAgreementError = (value: unknown): value is AgreementError => value instanceof AgreementError;
