import { CodedError } from "@doorbell/errors";

export type ForwarderErrorCode =
  /** The holder could not be reached or broke the protocol; nothing is known to have happened there. */
  | "ERR_FORWARDER_UPSTREAM"
  /** A doorbell from the holder that this relay does not pass on (not its subscription, malformed). */
  | "ERR_FORWARDER_NOT_RELAYED"
  /** A doorbell for a relay whose holder side is still being set up. */
  | "ERR_FORWARDER_NOT_READY";

/** The forwarder's one error class: a stable code and plain words, never a code or secret. */
export class ForwarderError extends CodedError<ForwarderErrorCode> {
  override readonly name = "ForwarderError";
}
