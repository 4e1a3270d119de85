import { isAgreementError } from "../errors.js";
import type { KeyResolver, TrustedKey } from "../jws/resolver.js";
import { verifyMessage } from "../jws/verify.js";
import { type ParsedMessage, parseMessage, parseMessageValue } from "../message/parse.js";

/**
 * "What a receiver checks before acting", for any transport. The transport says who sent the
 * message (e-mail: the From address, after DKIM aligned with it passed; A2A: nobody, the message
 * authenticates itself by its JWS). The result is one of the profile's three:
 *
 * - `signed_and_checked`: every check passed and the JWS verifies under the party key rule;
 * - `mail_checks_only`: every mail check passed, and there is no signature the receiver can trust;
 * - `could_not_check`: a check failed; the machine part is not acted on and an e-mail stays a
 *   normal e-mail. `refused` says whether it was refused (wrong recipient, replay, expired, prev,
 *   a signature that does not verify) rather than merely unreadable.
 */

export type ReceiverResult = "signed_and_checked" | "mail_checks_only" | "could_not_check";

export interface ReceiverVerdict {
  readonly result: ReceiverResult;
  /** The checked message; absent when the machine part itself could not be read. */
  readonly parsed?: ParsedMessage;
  /** The JWS, only when it verified. */
  readonly jws?: string;
  readonly signer?: TrustedKey;
  /** Why the result is not `signed_and_checked`, in plain words. */
  readonly reason?: string;
  /** A stable code for `reason`. */
  readonly code?: string;
  readonly refused: boolean;
  readonly warnings: readonly string[];
}

/** What the checks need from the inbox's storage. */
export interface ReceiverState {
  /** The stored hash of a message by id (sent or received in this inbox), for `prev`. */
  messageHash(id: string): Promise<string | undefined>;
  /**
   * Records a sender's nonce; false when that sender used it before. Called last, only for a
   * message that passed every other check, and must be atomic.
   */
  claimNonce(sender: string, nonce: string, expiresAt: number): Promise<boolean>;
}

export type TransportEvidence =
  | {
      readonly kind: "email";
      /** The one From address, when DKIM passed for a domain aligned with it. */
      readonly authenticatedFrom: string | undefined;
      /** Why the mail checks failed, when they did. */
      readonly failure?: string;
    }
  | { readonly kind: "a2a" };

export interface ReceiverCheckInput {
  readonly transport: TransportEvidence;
  /** The receiving inbox's address: `to.address` must be it. */
  readonly inbox: string;
  /** The machine part: bytes or text of the ld+json part, or an already-parsed DataPart value. */
  readonly part: { readonly text: string | Uint8Array } | { readonly value: unknown } | undefined;
  readonly jws?: string | undefined;
  readonly state: ReceiverState;
  readonly resolveKey: KeyResolver;
  /** Unix seconds. */
  readonly now: number;
}

/** Errors of the trust rule: the signature is not trusted, but the message is not proven false. */
const UNTRUSTED = new Set([
  "ERR_JKU_UNTRUSTED",
  "ERR_KEY_PAGE_UNAVAILABLE",
  "ERR_KEY_PAGE_INVALID",
  "ERR_SENDER_NOT_LISTED",
  "ERR_KEY_NOT_FOUND",
]);

const sameAddress = (a: string, b: string): boolean => a.trim().toLowerCase() === b.trim().toLowerCase();

function fail(
  reason: string,
  code: string,
  refused: boolean,
  parsed?: ParsedMessage,
  warnings: readonly string[] = [],
): ReceiverVerdict {
  return {
    result: "could_not_check",
    reason,
    code,
    refused,
    warnings,
    ...(parsed === undefined ? {} : { parsed }),
  };
}

export async function checkReceivedMessage(input: ReceiverCheckInput): Promise<ReceiverVerdict> {
  const { transport } = input;
  if (transport.kind === "email" && transport.authenticatedFrom === undefined) {
    return fail(
      transport.failure ?? "DKIM did not pass for a domain aligned with the From address",
      "ERR_MAIL_AUTH",
      false,
    );
  }
  if (input.part === undefined)
    return fail("the mail has no machine-readable part", "ERR_NO_MACHINE_PART", false);
  let parsed: ParsedMessage;
  try {
    parsed = "text" in input.part ? parseMessage(input.part.text) : parseMessageValue(input.part.value);
  } catch (error) {
    const code = isAgreementError(error) ? error.code : "ERR_MESSAGE_INVALID";
    return fail(`the machine part is not processed: ${(error as Error).message}`, code, false);
  }
  const message = parsed.message;
  const warnings = parsed.dropped.length > 0 ? [`unknown members dropped: ${parsed.dropped.join(", ")}`] : [];
  if (transport.kind === "email" && !sameAddress(message.from.address, transport.authenticatedFrom ?? "")) {
    return fail(
      `from.address ${message.from.address} is not the From address ${transport.authenticatedFrom}`,
      "ERR_WRONG_SENDER",
      false,
      parsed,
    );
  }
  if (!sameAddress(message.to.address, input.inbox)) {
    return fail(
      `the message is addressed to ${message.to.address}, not to this inbox`,
      "ERR_WRONG_RECIPIENT",
      true,
      parsed,
    );
  }
  if (!(message.exp > input.now))
    return fail("the message has expired (exp has passed)", "ERR_EXPIRED", true, parsed);
  if (message.in_reply_to === undefined) {
    if (message.prev !== undefined)
      return fail("prev is set but the message answers nothing", "ERR_PREV_MISMATCH", true, parsed);
  } else {
    const stored = await input.state.messageHash(message.in_reply_to);
    if (stored === undefined || stored !== message.prev) {
      return fail(
        stored === undefined
          ? `prev cannot be matched: the message it answers (${message.in_reply_to}) is not stored here`
          : "prev does not match the hash of the message it answers",
        "ERR_PREV_MISMATCH",
        true,
        parsed,
      );
    }
  }
  let verified: { signer: TrustedKey; jws: string } | undefined;
  if (input.jws !== undefined) {
    try {
      const result = await verifyMessage(input.jws, input.resolveKey);
      if (result.parsed.hash !== parsed.hash) {
        return fail(
          "the signed message is not the message in the machine part",
          "ERR_JWS_MISMATCH",
          true,
          parsed,
        );
      }
      verified = { signer: result.key, jws: input.jws };
      warnings.push(...result.key.warnings);
    } catch (error) {
      const code = isAgreementError(error) ? error.code : "ERR_JWS_INVALID";
      if (!UNTRUSTED.has(code)) {
        return fail(
          `the signature does not check: ${(error as Error).message}`,
          code,
          true,
          parsed,
          warnings,
        );
      }
      warnings.push(`the signature is not trusted: ${(error as Error).message}`);
    }
  }
  if (transport.kind === "a2a" && verified === undefined) {
    return fail(
      "over A2A a message authenticates itself by its JWS, and there is no JWS this agent can trust",
      "ERR_UNSIGNED",
      false,
      parsed,
      warnings,
    );
  }
  if (!(await input.state.claimNonce(message.from.address.toLowerCase(), message.nonce, message.exp))) {
    return fail(
      "the nonce was already seen from this sender (a replay)",
      "ERR_REPLAY",
      true,
      parsed,
      warnings,
    );
  }
  if (verified === undefined) {
    return {
      result: "mail_checks_only",
      parsed,
      refused: false,
      warnings,
      reason:
        input.jws === undefined
          ? "the message is not signed"
          : (warnings.at(-1) ?? "the signature is not trusted"),
      code: input.jws === undefined ? "ERR_UNSIGNED" : "ERR_SIGNATURE_UNTRUSTED",
    };
  }
  return {
    result: "signed_and_checked",
    parsed,
    jws: verified.jws,
    signer: verified.signer,
    refused: false,
    warnings,
  };
}
