// The one coded error. Each package declares its codes as a string union and one class on this
// base, so a caller tells refusals apart by `code` (stable across versions) and never by message.
// It has no dependencies: both ground-floor packages, store and webhooks, build on it.

/** What a coded error may carry besides its code and message. */
export interface CodedErrorOptions {
  /** The error that led to this one, kept for logs; its message is never shown to a user. */
  cause?: unknown;
}

/**
 * An error with a stable `code` (like `ERR_STORE_CONFIG`) and a message in plain words that
 * carries no secret. Subclasses set `name` and narrow `C` to their package's codes.
 */
export class CodedError<C extends string = string> extends Error {
  readonly code: C;

  constructor(code: C, message: string, options?: CodedErrorOptions) {
    // Passed through as given: without options the error has no own `cause` at all.
    super(message, options);
    this.code = code;
  }
}

/** Whether `value` is a coded error, optionally with one of `codes`. */
export function isCodedError(value: unknown, ...codes: readonly string[]): value is CodedError {
  return value instanceof CodedError && (codes.length === 0 || codes.includes(value.code));
}
