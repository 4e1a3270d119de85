import type { AgreementErrorCode } from "../errors.js";
import type { KeysFrom } from "../jws/resolver.js";
import type { AgreementRecord } from "../record/types.js";

/**
 * The four results of a check (profile: "Results of a check"), and a fifth the profile leaves
 * implicit: "could not check", when a key page could not be reached (network, timeout, server
 * error). It is not a verdict on the record; checking again later may give one.
 */
export type CheckOutcome =
  | "two_signatures"
  | "one_signature"
  | "their_reply"
  | "does_not_check_out"
  | "could_not_check";

/** The workflow step a record failed at (1 parse and hashes, 2 terms, 3 binding, 4 keys, 5 signatures). */
export type CheckStep = 1 | 2 | 3 | 4 | 5;

export interface SignatureReport {
  readonly of: "offer" | "acceptance" | "seal";
  readonly party: string;
  readonly kid: string;
  readonly vouchedBy: "address" | "domain" | "dns";
  readonly keysFrom: KeysFrom;
}

interface Passed {
  readonly ok: true;
  readonly result: Exclude<CheckOutcome, "does_not_check_out" | "could_not_check">;
  /** One plain sentence for a person. */
  readonly summary: string;
  readonly record: AgreementRecord;
  readonly signatures: readonly SignatureReport[];
  /**
   * "as_supplied" when any signature's key page was not fetched from a trusted origin (pages given
   * to the checker): the record matches those pages, and nobody but their giver vouches for them.
   */
  readonly keys: KeysFrom;
  /** E.g. a key revoked after it signed: the record checks, with this said. */
  readonly warnings: readonly string[];
  /** their_reply: the party that sealed the record and vouches for the reply. */
  readonly vouchedBy?: { readonly party: string; readonly org_name: string };
}

interface Failed {
  readonly ok: false;
  readonly result: "does_not_check_out" | "could_not_check";
  /** The reason in plain words. */
  readonly reason: string;
  readonly code: AgreementErrorCode;
  readonly step: CheckStep;
  readonly summary: string;
  readonly details: readonly string[];
}

export type CheckResult = Passed | Failed;

export const RESULT_TITLES: Readonly<Record<CheckOutcome, string>> = {
  two_signatures: "Checks out, two signatures",
  one_signature: "Checks out, one signature",
  their_reply: "Their reply, recorded by a named party",
  does_not_check_out: "Does not check out",
  could_not_check: "Could not check",
};

/** Said after the title of a verdict whose keys no trusted origin vouched for. */
export const KEYS_AS_SUPPLIED = "keys as supplied";

/** The verdict's title as a person should read it: where the keys came from is part of it. */
export const verdictTitle = (outcome: CheckOutcome, keys?: KeysFrom): string =>
  keys === "as_supplied" ? `${RESULT_TITLES[outcome]} (${KEYS_AS_SUPPLIED})` : RESULT_TITLES[outcome];
