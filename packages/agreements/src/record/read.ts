import { canonicalJson } from "../canonical/canonicalize.js";
import { assertJsonValue, type JsonValue } from "../canonical/json-value.js";
import { parseJson } from "../canonical/parse-json.js";
import { MAX_RECORD_BYTES, RECORD_PROFILE, SEAL_JWS_TYPE } from "../constants.js";
import { AgreementError } from "../errors.js";
import { type CompactParts, readCompactJws, type SplitJws, splitCompactJws } from "../jws/compact.js";
import type { ProtectedHeader } from "../jws/header.js";
import { readSignedParts } from "../jws/verify.js";
import { type ParsedMessage, parseMessage } from "../message/parse.js";
import type { Accept, Offer } from "../message/types.js";
import { describeErrors, recordValidatorWithoutJwsForm, validatorFor } from "../schemas.js";
import type { AgreementRecord, RecordedMessage, UnsealedRecord } from "./types.js";
import { unsealedCanonical } from "./unsealed-canonical.js";

/** A message taken out of a record, its form and hash checked, its signature not yet. */
export interface RecordMessage<M> {
  readonly message: M;
  readonly parsed: ParsedMessage;
  /** Present when the record holds the message signed. */
  readonly jws?: string;
  readonly header?: ProtectedHeader;
  /** The split JWS, for verifying its signature in step 5. */
  readonly parts?: CompactParts;
}

/** A record after workflow step 1: parsed, in profile, schema-valid, every hash recomputed. */
export interface ReadRecord {
  readonly record: AgreementRecord;
  readonly offer: RecordMessage<Offer>;
  readonly acceptance?: RecordMessage<Accept>;
  readonly sealHeader: ProtectedHeader;
  readonly sealParts: CompactParts;
  /** Plain-words notes for the result: members the profile does not define, a missing sealed_at. */
  readonly notes: readonly string[];
}

// The members the profile defines where a record may carry others (see the record schema).
const RECORD_MEMBERS = new Set([
  "profile",
  "id",
  "thread",
  "kind",
  "parties",
  "offer",
  "acceptance",
  "reply",
  "terms",
  "agreed_at",
  "chain",
  "offer_current",
  "sealed_at",
  "seal",
]);
const PARTY_MEMBERS = new Set(["role", "party", "address", "org_name", "kid", "authority"]);
const MESSAGE_MEMBERS = new Set(["jws", "json", "hash"]);
const REPLY_MEMBERS = new Set(["hash", "authentication_results", "received_at", "slot"]);

/**
 * The profile's rule for unknown members, for a sealed document: they are not dropped (the seal
 * covers them, so dropping them would break it) but they count for nothing, and are named.
 */
export const unknownRecordMembers = (record: {
  readonly parties?: unknown;
  readonly offer?: unknown;
  readonly acceptance?: unknown;
  readonly reply?: unknown;
}): string[] => {
  const found: string[] = [];
  const look = (value: unknown, known: ReadonlySet<string>, path: string) => {
    if (value === null || typeof value !== "object" || Array.isArray(value)) return;
    for (const name of Object.keys(value)) if (!known.has(name)) found.push(`${path}/${name}`);
  };
  look(record, RECORD_MEMBERS, "");
  const parties = record.parties;
  if (Array.isArray(parties)) {
    for (const [i, entry] of parties.entries()) look(entry, PARTY_MEMBERS, `/parties/${i}`);
  }
  look(record.offer, MESSAGE_MEMBERS, "/offer");
  look(record.acceptance, MESSAGE_MEMBERS, "/acceptance");
  look(record.reply, REPLY_MEMBERS, "/reply");
  return found;
};

const fail = (
  code: ConstructorParameters<typeof AgreementError>[0],
  message: string,
  details?: string[],
): never => {
  throw new AgreementError(code, message, details);
};

/** The record without its seal: exactly what the seal signs (in canonical form). */
export const unsealed = (record: AgreementRecord): UnsealedRecord => {
  const { seal: _seal, ...rest } = record;
  return rest;
};

const readMessage = (recorded: RecordedMessage, what: "offer" | "acceptance"): RecordMessage<unknown> => {
  let result: { parsed: ParsedMessage; jws?: string; header?: ProtectedHeader; parts?: CompactParts };
  try {
    if ("jws" in recorded) {
      const { header, parsed, parts } = readSignedParts(recorded.jws);
      result = { parsed, jws: recorded.jws, header, parts };
    } else {
      const parsed = parseMessage(recorded.json);
      if (parsed.canonical !== recorded.json) {
        fail("ERR_NOT_CANONICAL", `the ${what} in the record is not in its canonical form`);
      }
      result = { parsed };
    }
  } catch (error) {
    if (error instanceof AgreementError && !error.message.startsWith(`the ${what}`)) {
      throw new AgreementError(error.code, `the ${what} in the record: ${error.message}`, error.details);
    }
    throw error;
  }
  if (result.parsed.hash !== recorded.hash) {
    fail("ERR_RECORD_HASH", `the ${what}'s recorded hash is not the SHA-256 of its canonical form`);
  }
  return { message: result.parsed.message, ...result };
};

const checkChain = (record: AgreementRecord, offer: Offer, offerHash: string, closing: string): void => {
  const { chain } = record;
  const offerAt = chain.indexOf(offerHash);
  if (offerAt < 0) fail("ERR_RECORD_CHAIN", "the chain does not contain the offer's hash");
  if (chain.at(-1) !== closing) {
    fail(
      "ERR_RECORD_CHAIN",
      `the chain does not end with the ${record.kind === "their_reply" ? "reply" : "acceptance"}'s hash`,
    );
  }
  if (offerAt >= chain.length - 1)
    fail("ERR_RECORD_CHAIN", "the offer's hash is not before the closing message in the chain");
  if (offer.prev !== undefined) {
    const prevAt = chain.indexOf(offer.prev);
    if (prevAt < 0 || prevAt > offerAt) {
      fail(
        "ERR_RECORD_CHAIN",
        "the message the offer answers (its prev) is not before the offer in the chain",
      );
    }
  }
};

/**
 * Workflow step 1: "Parse the record and refuse it if it is over 256 KB or its profile is not
 * agent-agreement/1. Recompute the SHA-256 of the offer and of the acceptance, and every hash in
 * the chain. Each message must be in its canonical form." The seal's header and its payload (the
 * canonical record without the seal) are checked here too; its signature is step 5.
 */
export const readRecord = (input: string | Uint8Array | unknown): ReadRecord => {
  let value: JsonValue;
  if (typeof input === "string" || input instanceof Uint8Array) {
    const size = typeof input === "string" ? Buffer.byteLength(input, "utf8") : input.byteLength;
    if (size > MAX_RECORD_BYTES) {
      fail(
        "ERR_RECORD_TOO_LARGE",
        `the record is ${size.toLocaleString("en-US")} bytes; at most ${MAX_RECORD_BYTES.toLocaleString("en-US")} are allowed`,
      );
    }
    value = parseJson(input, "the record");
  } else {
    value = assertJsonValue(input);
    const size = Buffer.byteLength(canonicalJson(value), "utf8");
    if (size > MAX_RECORD_BYTES)
      fail(
        "ERR_RECORD_TOO_LARGE",
        `the record is ${size.toLocaleString("en-US")} bytes in canonical form; at most ${MAX_RECORD_BYTES.toLocaleString("en-US")} are allowed`,
      );
  }
  if (value === null || typeof value !== "object" || Array.isArray(value))
    fail("ERR_RECORD_INVALID", "the record is not a JSON object");
  const profile = (value as Record<string, unknown>).profile;
  if (profile !== RECORD_PROFILE) {
    fail("ERR_RECORD_PROFILE", `the record's profile is ${JSON.stringify(profile)}, not ${RECORD_PROFILE}`);
  }
  if (!recordValidatorWithoutJwsForm<AgreementRecord>()(value)) {
    // The full schema is stricter, so it refuses too, in its own words.
    refuseIfInvalid(value);
    return fail("ERR_RECORD_INVALID", "the record does not validate");
  }
  try {
    return readValidRecord(value);
  } catch (error) {
    // What the full schema refuses is reported in its words, as if it had been checked first.
    if (error instanceof AgreementError) refuseIfInvalid(value);
    throw error;
  }
};

/** Throws the full schema's refusal when the value does not validate. */
const refuseIfInvalid = (value: JsonValue): void => {
  const validate = validatorFor("record");
  if (!validate(value)) {
    const problems = describeErrors(validate.errors);
    fail("ERR_RECORD_INVALID", `the record does not validate: ${problems[0]}`, problems);
  }
};

/** Step 1 after the schema: the messages, the chain and what the seal covers. */
const readValidRecord = (record: AgreementRecord): ReadRecord => {
  const offer = readMessage(record.offer, "offer");
  if (offer.parsed.message.type !== "quote" && offer.parsed.message.type !== "propose_times") {
    fail(
      "ERR_RECORD_INVALID",
      `the record's offer is a ${offer.parsed.message.type}, which cannot be accepted`,
    );
  }
  const acceptance = record.acceptance ? readMessage(record.acceptance, "acceptance") : undefined;
  if (acceptance && acceptance.parsed.message.type !== "accept") {
    fail(
      "ERR_RECORD_INVALID",
      `the record's acceptance is a ${acceptance.parsed.message.type}, not an accept`,
    );
  }
  if (record.kind !== "our_signature" && !offer.jws) {
    fail("ERR_RECORD_INVALID", `a ${record.kind} record holds the offer signed (as a JWS)`);
  }
  if (record.kind !== "their_reply" && !acceptance?.jws) {
    fail("ERR_RECORD_INVALID", `a ${record.kind} record holds the acceptance signed (as a JWS)`);
  }
  const closing = acceptance ? acceptance.parsed.hash : (record.reply?.hash as string);
  checkChain(record, offer.message as Offer, offer.parsed.hash, closing);

  const sealParts = readSeal(record, { offer: offer.jws, acceptance: acceptance?.jws });
  return {
    record,
    offer: offer as RecordMessage<Offer>,
    ...(acceptance ? { acceptance: acceptance as RecordMessage<Accept> } : {}),
    sealHeader: sealParts.header,
    sealParts,
    notes: recordNotes(record),
  };
};

const sealFailure = (error: unknown): never => {
  const reason = error instanceof Error ? error.message : String(error);
  return fail("ERR_RECORD_SEAL", `the seal: ${reason}`);
};

/**
 * The seal's header and signature form, and its payload: exactly the canonical bytes of the record
 * without the seal. The expected bytes are encoded and compared with the payload part as it is
 * (equal only when that part is their canonical base64url), so kilobytes are not decoded; when
 * they differ, the seal is read in full to say why, as it always was.
 */
const readSeal = (
  record: AgreementRecord,
  checkedJws: { readonly offer?: string; readonly acceptance?: string },
): CompactParts => {
  const readInFull = (): CompactParts => {
    try {
      return readCompactJws(record.seal, SEAL_JWS_TYPE, MAX_RECORD_BYTES);
    } catch (error) {
      return sealFailure(error);
    }
  };
  let split: SplitJws;
  try {
    split = splitCompactJws(record.seal, SEAL_JWS_TYPE, MAX_RECORD_BYTES);
  } catch (error) {
    return sealFailure(error);
  }
  let expected: Buffer;
  try {
    expected = Buffer.from(unsealedCanonical(record, checkedJws), "utf8");
  } catch (error) {
    readInFull(); // a payload that is not base64url is named first, as it always was
    throw error;
  }
  const { header, encodedPayload, signingInput, signature } = split;
  if (encodedPayload === expected.toString("base64url")) {
    return { header, payload: expected, signingInput, signature };
  }
  const parts = readInFull();
  if (!expected.equals(parts.payload)) {
    fail(
      "ERR_RECORD_SEAL",
      "the record was changed after it was sealed: the seal does not cover this content",
    );
  }
  return parts;
};

const recordNotes = (record: AgreementRecord): string[] => {
  const notes: string[] = [];
  const unknown = unknownRecordMembers(record);
  if (unknown.length > 0) {
    notes.push(
      `the record carries members this profile does not define (${unknown.join(", ")}); the seal covers them, but they are not part of the agreement`,
    );
  }
  if (record.sealed_at === undefined) {
    notes.push(
      "the record does not say when it was sealed; the sealing key was judged at the time of agreement",
    );
  }
  return notes;
};
