import { canonicalJson } from "../canonical/canonicalize.js";
import { sha256Hex } from "../canonical/hash.js";
import type { JsonValue } from "../canonical/json-value.js";
import { parseJson } from "../canonical/parse-json.js";
import { utf8Text } from "../canonical/utf8.js";
import { MAX_MESSAGE_BYTES, MESSAGE_PROFILE } from "../constants.js";
import { AgreementError } from "../errors.js";
import { describeErrors, validatorFor } from "../schemas.js";
import { inProfileOrder, projectMessage } from "./project.js";
import { messageRuleViolations } from "./rules.js";
import type { Message } from "./types.js";

/** A message as a receiver holds it after every check of its form. */
export interface ParsedMessage {
  readonly message: Message;
  /** RFC 8785 text of `message`: what a signature must carry and what is hashed. */
  readonly canonical: string;
  readonly bytes: Uint8Array;
  /** Lowercase hex SHA-256 of `bytes`: the message's hash for prev, chains and records. */
  readonly hash: string;
  /** JSON pointers of the members that were dropped because the profile does not define them. */
  readonly dropped: readonly string[];
}

const tooLarge = (size: number): AgreementError =>
  new AgreementError(
    "ERR_MESSAGE_TOO_LARGE",
    `the message is ${size.toLocaleString("en-US")} bytes; the profile allows at most ${MAX_MESSAGE_BYTES.toLocaleString("en-US")}`,
  );

const refuse = (problems: readonly string[]): never => {
  throw new AgreementError("ERR_MESSAGE_INVALID", `the message does not validate: ${problems[0]}`, problems);
};

interface Checked {
  readonly message: Message;
  readonly dropped: string[];
  /** The message's canonical form. */
  readonly canonical: string;
}

/**
 * Checks a value against the message schema and the profile's rules, then drops the members the
 * profile does not define. The value is not changed; the result is a new object.
 */
const check = (value: JsonValue): Checked => {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new AgreementError("ERR_MESSAGE_INVALID", "the message is not a JSON object");
  }
  if ("profile" in value && value.profile !== MESSAGE_PROFILE) {
    throw new AgreementError(
      "ERR_MESSAGE_PROFILE",
      `the message has the profile ${JSON.stringify(value.profile)}; only ${MESSAGE_PROFILE} is understood`,
    );
  }
  const validate = validatorFor<Message>("message");
  if (!validate(value)) return refuse(describeErrors(validate.errors));
  const { message, dropped, plain } = projectMessage(value);
  const problems = messageRuleViolations(message);
  if (problems.length > 0) refuse(problems);
  // The projection is in canonical member order, so a plain one is written as it is.
  return { message, dropped, canonical: plain ? JSON.stringify(message) : canonicalJson(message) };
};

/** Below this many UTF-16 units, a text is surely within the cap (at most 3 UTF-8 bytes each). */
const SURELY_SMALL = Math.floor(MAX_MESSAGE_BYTES / 3);

/**
 * A checked message, its bytes and hash made when first read: a signer encodes the canonical text
 * itself (jws/sign.ts) and needs no hash, a verifier already holds the payload, and neither pays
 * for another copy. A class, so each one is a plain fast object rather than a literal of accessors.
 */
class Parsed implements ParsedMessage {
  #bytes: Uint8Array | undefined;
  #hash: string | undefined;
  readonly dropped: readonly string[];

  constructor(
    readonly message: Message,
    readonly canonical: string,
    dropped: string[],
    bytes: Uint8Array | undefined,
  ) {
    this.#bytes = bytes;
    this.dropped = dropped.length === 0 ? NONE_DROPPED : Object.freeze(dropped);
    Object.freeze(this);
  }

  get bytes(): Uint8Array {
    this.#bytes ??= Buffer.from(this.canonical, "utf8");
    return this.#bytes;
  }

  get hash(): string {
    this.#hash ??= sha256Hex(this.bytes);
    return this.#hash;
  }
}

const NONE_DROPPED: readonly string[] = Object.freeze([]);

/** The bytes and hash of a checked message. */
const finish = ({ message, dropped, canonical }: Checked, given?: Uint8Array): ParsedMessage => {
  if (given === undefined && canonical.length > SURELY_SMALL) {
    const size = Buffer.byteLength(canonical, "utf8");
    if (size > MAX_MESSAGE_BYTES) throw tooLarge(size);
  }
  return new Parsed(message, canonical, dropped, given);
};

/**
 * A signed payload read the short way: it is accepted here only when it already is, byte for byte,
 * the canonical form of a valid message with no member the profile does not define, which is
 * what a signature must cover (verify.ts). Then the parsed value is the message (its members are
 * the profile's, in canonical order), the payload is its bytes, and neither a projection nor a
 * second encoding is made. Anything else returns undefined, and the caller reads the payload the
 * long way, which says precisely why it does not count.
 */
export const parseCanonicalPayload = (payload: Uint8Array): ParsedMessage | undefined => {
  if (payload.byteLength > MAX_MESSAGE_BYTES) return undefined;
  const text = utf8Text(payload);
  if (text === undefined) return undefined; // not UTF-8: the long way says so
  let value: JsonValue;
  try {
    value = JSON.parse(text) as JsonValue;
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  const message = value;
  if (!validatorFor<Message>("message")(message)) return undefined;
  if (!inProfileOrder(message)) return undefined;
  if (messageRuleViolations(message).length > 0) return undefined;
  // Members in canonical order and every value plain: JSON.stringify writes the canonical form.
  if (JSON.stringify(message) !== text) return undefined;
  return finish({ message, dropped: [], canonical: text }, payload);
};

/**
 * A receiver's parse of a machine part (JSON text or UTF-8 bytes): at most 32 KB, strict JSON,
 * the schema, the profile's rules; unknown members are dropped and listed in `dropped`.
 */
export const parseMessage = (input: string | Uint8Array): ParsedMessage => {
  const size = typeof input === "string" ? Buffer.byteLength(input, "utf8") : input.byteLength;
  if (size > MAX_MESSAGE_BYTES) throw tooLarge(size);
  return finish(check(parseJson(input, "the message")));
};

/**
 * The same checks for text already known to be at most 32 KB, read with plain JSON.parse: for a
 * signed payload, which must equal its canonical form (see verify.ts); not for anything else.
 */
export const parseMessageText = (text: string, size: number): ParsedMessage => {
  if (size > MAX_MESSAGE_BYTES) throw tooLarge(size);
  return finish(check(JSON.parse(text) as JsonValue));
};

/** The same checks for a value already parsed (e.g. the DataPart of an A2A message). */
export const parseMessageValue = (value: unknown): ParsedMessage => {
  let size: number;
  try {
    // JCS writes the characters JSON.stringify writes, in another member order, so this is the
    // size before anything slower is done. Values JSON cannot carry are refused by the schema and
    // the projection (which keeps only the profile's members, as plain data).
    const text = JSON.stringify(value) as string | undefined;
    if (text === undefined) throw new Error("the value is not JSON data");
    size = Buffer.byteLength(text, "utf8");
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new AgreementError("ERR_MESSAGE_INVALID", `the message is not JSON data: ${reason}`);
  }
  if (size > MAX_MESSAGE_BYTES) throw tooLarge(size);
  return finish(check(value as JsonValue));
};

/**
 * A sender's check: the message must validate and carry no member the profile does not define,
 * because what is signed must be exactly what a receiver will parse. The sender's own value is not
 * measured first (a receiver's is): the 32 KB cap is applied to its canonical form.
 */
export const validateMessage = (value: unknown): ParsedMessage => {
  const parsed = finish(check(value as JsonValue));
  if (parsed.dropped.length > 0) {
    throw new AgreementError(
      "ERR_MESSAGE_INVALID",
      `the message has members this profile does not define: ${parsed.dropped.join(", ")}`,
      parsed.dropped,
    );
  }
  return parsed;
};
