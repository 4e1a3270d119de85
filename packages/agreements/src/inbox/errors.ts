import { CodedError } from "@doorbell/errors";
/**
 * Errors of the agent inbox and its channels, with a stable code and a plain-words message. (The
 * core's `AgreementError` codes are about documents; these are about an inbox's own operation.)
 */
export type InboxErrorCode =
  /** The inbox does not exist, or expired and deleted itself. */
  | "ERR_INBOX_UNKNOWN"
  /** No outlet is connected for the thread's channel. */
  | "ERR_NO_OUTLET"
  /** Nothing waits for the owner under that id (already decided, or never there). */
  | "ERR_NOTHING_PENDING"
  /** Our own offer lifecycle refuses the message (an accept of an expired or replaced offer). */
  | "ERR_OFFER_REFUSED"
  /** An offer to accept is not held as signed, so no record can be sealed. */
  | "ERR_OFFER_NOT_HELD"
  /** The other agent does not speak agent-intents/1 over A2A, or answered outside the protocol. */
  | "ERR_A2A_PEER"
  /** The other agent's card could not be fetched under the egress policy, or names a refused endpoint. */
  | "ERR_A2A_CARD"
  /** The thread has no A2A task binding (or the binding is of the wrong kind). */
  | "ERR_A2A_NO_TASK";

export class InboxError extends CodedError<InboxErrorCode> {
  override readonly name = "InboxError";
}
