// The binding's refusal codes, as a tool result's `_meta` carries them, and the error that bears one.
import { CodedError } from "@doorbell/errors";

/** A refusal's stable code on the wire. */
export type IntentsErrorCode =
  | "ERR_HOLDER_NOT_FOUND"
  | "ERR_HOLDER_FORBIDDEN"
  | "ERR_HOLDER_INVALID"
  | "ERR_HOLDER_CONFLICT"
  | "ERR_HOLDER_GONE"
  | "ERR_HOLDER_RATE_LIMITED"
  /** A service the holder needs (the mail server) failed; nothing was changed; try again later. */
  | "ERR_HOLDER_UNAVAILABLE";

/**
 * A refusal with a wire code and plain words (never a secret). The tool guard answers one as its
 * own code and words; the holder's domain error extends it, the forwarder throws it directly.
 */
export class IntentsError<C extends IntentsErrorCode = IntentsErrorCode> extends CodedError<C> {
  override readonly name: string = "IntentsError";
}
