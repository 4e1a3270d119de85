import { canonicalJson } from "../canonical/canonicalize.js";
import { assertJsonValue, type JsonValue } from "../canonical/json-value.js";
import { parseJson } from "../canonical/parse-json.js";
import { MAX_RECORD_BYTES, RECORD_PROFILE, SEAL_JWS_TYPE } from "../constants.js";
import { AgreementError } from "../errors.js";
import { readCompactJws } from "../jws/compact.js";
import type { ProtectedHeader } from "../jws/header.js";
import { readSignedMessage } from "../jws/verify.js";
import { type ParsedMessage, parseMessage } from "../message/parse.js";
import type { Accept, Offer } from "../message/types.js";
import { describeErrors, validatorFor } from "../schemas.js";
import type { AgreementRecord, RecordedMessage, UnsealedRecord } from "./types.js";

const encoder = new TextEncoder();

/** A message taken out of a record, its form and hash checked, its signature not yet. */
export interface RecordMessage<M> {
  readonly message: M;
  readonly parsed: ParsedMessage;
  /** Present when the record holds the message signed. */
  readonly jws?: string;
  readonly header?: ProtectedHeader;
}

/** A record after workflow step 1: parsed, in profile, schema-valid, every hash recomputed. */
export interface ReadRecord {
  readonly record: AgreementRecord;
  readonly offer: RecordMessage<Offer>;
  readonly acceptance?: RecordMessage<Accept>;
  readonly sealHeader: ProtectedHeader;
}

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
  let result: { parsed: ParsedMessage; jws?: string; header?: ProtectedHeader };
  try {
    if ("jws" in recorded) {
      const { header, parsed } = readSignedMessage(recorded.jws);
      result = { parsed, jws: recorded.jws, header };
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
    const size = typeof input === "string" ? encoder.encode(input).byteLength : input.byteLength;
    if (size > MAX_RECORD_BYTES) {
      fail(
        "ERR_RECORD_TOO_LARGE",
        `the record is ${size.toLocaleString("en-US")} bytes; at most ${MAX_RECORD_BYTES.toLocaleString("en-US")} are allowed`,
      );
    }
    value = parseJson(input, "the record");
  } else {
    value = assertJsonValue(input);
    const size = encoder.encode(canonicalJson(value)).byteLength;
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
  const validate = validatorFor("record");
  if (!validate(value)) {
    const problems = describeErrors(validate.errors);
    fail("ERR_RECORD_INVALID", `the record does not validate: ${problems[0]}`, problems);
  }
  const record = value as unknown as AgreementRecord;

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

  let sealHeader: ProtectedHeader;
  let payload: Uint8Array;
  try {
    ({ header: sealHeader, payload } = readCompactJws(record.seal, SEAL_JWS_TYPE, MAX_RECORD_BYTES));
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return fail("ERR_RECORD_SEAL", `the seal: ${reason}`);
  }
  const expected = encoder.encode(canonicalJson(unsealed(record)));
  if (!Buffer.from(payload).equals(expected)) {
    fail(
      "ERR_RECORD_SEAL",
      "the record was changed after it was sealed: the seal does not cover this content",
    );
  }
  return {
    record,
    offer: offer as RecordMessage<Offer>,
    ...(acceptance ? { acceptance: acceptance as RecordMessage<Accept> } : {}),
    sealHeader,
  };
};
