import { AgreementError } from "../errors.js";
import { type CompactParts, signatureVerifies } from "../jws/compact.js";
import type { ProtectedHeader } from "../jws/header.js";
import { keyThumbprintSync } from "../jws/keys.js";
import type { KeyResolver, KeysFrom, TrustedKey } from "../jws/resolver.js";
import { createKeyResolver, type KeyResolverOptions } from "../keys/trust.js";
import { checkBinding, checkTerms, sealingParty } from "../record/binding.js";
import { type ReadRecord, readRecord } from "../record/read.js";
import {
  type CheckOutcome,
  type CheckResult,
  type CheckStep,
  RESULT_TITLES,
  type SignatureReport,
  verdictTitle,
} from "./result.js";

export interface CheckOptions extends KeyResolverOptions {
  /** A ready trust rule; otherwise one is made from the options (trusted origins, source, txt). */
  readonly resolveKey?: KeyResolver;
}

interface Signature {
  readonly of: SignatureReport["of"];
  readonly parts: CompactParts;
  readonly header: ProtectedHeader;
  readonly signer: { address: string; party?: string };
  readonly issuedAt: number;
}

class StepFailure extends Error {
  constructor(
    readonly step: CheckStep,
    readonly failure: AgreementError,
  ) {
    super(failure.message);
  }
}

/** Runs a synchronous step: an AgreementError becomes that step's failure. */
const at = <T>(step: CheckStep, run: () => T): T => {
  try {
    return run();
  } catch (error) {
    if (error instanceof AgreementError) throw new StepFailure(step, error);
    throw error;
  }
};

/** The trust rule's key for one signature, with its thumbprint checked (step 4). */
const keyFor = async (signature: Signature, resolveKey: KeyResolver): Promise<TrustedKey> => {
  try {
    const trusted = await resolveKey({
      jku: signature.header.jku,
      kid: signature.header.kid,
      signer: signature.signer,
      issuedAt: signature.issuedAt,
    });
    if (keyThumbprintSync(trusted.jwk) !== signature.header.kid) {
      throw new AgreementError("ERR_KEY_NOT_FOUND", "the key found has a different thumbprint than the kid");
    }
    return trusted;
  } catch (error) {
    if (error instanceof AgreementError) {
      throw new StepFailure(
        4,
        new AgreementError(error.code, `the ${signature.of} signature: ${error.message}`, error.details),
      );
    }
    throw new StepFailure(
      4,
      new AgreementError(
        "ERR_KEY_PAGE_UNREACHABLE",
        `the ${signature.of} signature: its key page could not be read`,
      ),
    );
  }
};

/** The signatures a record of each kind must carry (step 5): the seal always. */
const signaturesOf = (read: ReadRecord): Signature[] => {
  const { record, offer, acceptance, sealHeader } = read;
  const list: Signature[] = [];
  if (record.kind !== "our_signature" && offer.parts && offer.header) {
    list.push({
      of: "offer",
      parts: offer.parts,
      header: offer.header,
      signer: offer.message.from,
      issuedAt: offer.message.iat,
    });
  }
  if (record.kind !== "their_reply" && acceptance?.parts && acceptance.header) {
    list.push({
      of: "acceptance",
      parts: acceptance.parts,
      header: acceptance.header,
      signer: acceptance.message.from,
      issuedAt: acceptance.message.iat,
    });
  }
  const sealer = sealingParty(read);
  list.push({
    of: "seal",
    parts: read.sealParts,
    header: sealHeader,
    signer: { address: sealer.address, ...(sealer.party ? { party: sealer.party } : {}) },
    // Without sealed_at (Doorbell's addition), the earliest the seal can have been made.
    issuedAt: record.sealed_at ?? record.agreed_at,
  });
  return list;
};

const nameOf = (entry: { org_name: string; party?: string }): string =>
  entry.party ? `${entry.org_name} (${entry.party})` : entry.org_name;

/**
 * Checks an agreement record as the profile's workflow says, offline except for key pages:
 * 1 parse, size, profile, canonical forms and hashes, chain, seal coverage; 2 terms; 3 binding;
 * 4 each signature's key under the trust rule; 5 each signature; 6 one of four results, with the
 * reason in plain words, or "could not check" when a key page could not be reached. Never throws for anything in the record; only for a caller's mistake.
 */
export const checkRecord = async (
  input: string | Uint8Array | unknown,
  options: CheckOptions = {},
): Promise<CheckResult> => {
  const resolveKey = options.resolveKey ?? createKeyResolver(options);
  try {
    const read = at(1, () => readRecord(input));
    at(2, () => checkTerms(read));
    at(3, () => checkBinding(read));
    const signatures = at(4, () => signaturesOf(read));
    // One after another, as a trust rule that fetches pages expects (each page is then cached).
    const keys: TrustedKey[] = [];
    for (const signature of signatures) keys.push(await keyFor(signature, resolveKey));
    at(5, () => {
      for (const [index, signature] of signatures.entries()) {
        if (!signatureVerifies(signature.parts, (keys[index] as TrustedKey).jwk)) {
          throw new AgreementError("ERR_JWS_SIGNATURE", `the ${signature.of} signature does not verify`);
        }
      }
    });
    const { record } = read;
    const [offerer, accepter] = record.parties;
    const reports: SignatureReport[] = signatures.map((s, i) => ({
      of: s.of,
      party: (keys[i] as TrustedKey).party,
      kid: s.header.kid,
      vouchedBy: (keys[i] as TrustedKey).vouchedBy,
      keysFrom: (keys[i] as TrustedKey).keysFrom,
    }));
    const keysFrom: KeysFrom = reports.every((r) => r.keysFrom === "trusted_origin")
      ? "trusted_origin"
      : "as_supplied";
    // The verdict's first words say where the keys came from when no trusted origin vouched.
    const title = (outcome: CheckOutcome) => verdictTitle(outcome, keysFrom);
    const warnings = [
      ...read.notes,
      ...keys.flatMap((k, i) => k.warnings.map((w) => `${signatures[i]?.of} signature: ${w}`)),
    ];
    if (record.kind === "two_signatures") {
      return {
        ok: true,
        result: "two_signatures",
        summary: `${title("two_signatures")}: ${nameOf(offerer)} offered and ${nameOf(accepter)} accepted; both signatures and the seal verify.`,
        record,
        signatures: reports,
        keys: keysFrom,
        warnings,
      };
    }
    if (record.kind === "our_signature") {
      return {
        ok: true,
        result: "one_signature",
        summary: `${title("one_signature")}: ${nameOf(accepter)} accepted and sealed; the offer from ${nameOf(offerer)} could not be checked.`,
        record,
        signatures: reports,
        keys: keysFrom,
        warnings,
      };
    }
    return {
      ok: true,
      result: "their_reply",
      summary: `${title("their_reply")}: ${nameOf(offerer)} signed the offer and vouches that ${accepter.address} replied in words; the other side did not sign.`,
      record,
      signatures: reports,
      keys: keysFrom,
      warnings,
      vouchedBy: { party: offerer.party as string, org_name: offerer.org_name },
    };
  } catch (error) {
    if (!(error instanceof StepFailure)) throw error;
    const result =
      error.failure.code === "ERR_KEY_PAGE_UNREACHABLE" ? "could_not_check" : "does_not_check_out";
    return {
      ok: false,
      result,
      reason: error.failure.message,
      code: error.failure.code,
      step: error.step,
      summary: `${RESULT_TITLES[result]}: ${error.failure.message}.`,
      details: error.failure.details,
    };
  }
};
