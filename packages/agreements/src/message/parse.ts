import { canonicalJson } from "../canonical/canonicalize.js";
import { sha256Hex } from "../canonical/hash.js";
import { assertJsonValue, type JsonValue } from "../canonical/json-value.js";
import { parseJson } from "../canonical/parse-json.js";
import { MAX_MESSAGE_BYTES, MESSAGE_PROFILE } from "../constants.js";
import { AgreementError } from "../errors.js";
import { describeErrors, validatorFor } from "../schemas.js";
import { dropUnknownMembers, unknownMembers } from "./project.js";
import { messageRuleViolations } from "./rules.js";
import type { Message } from "./types.js";

const encoder = new TextEncoder();

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

/**
 * Checks a value against the message schema and the profile's rules, then drops the members the
 * profile does not define. The value is not changed; the result is a new object.
 */
const check = (value: JsonValue): { message: Message; dropped: string[] } => {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new AgreementError("ERR_MESSAGE_INVALID", "the message is not a JSON object");
  }
  if ("profile" in value && value.profile !== MESSAGE_PROFILE) {
    throw new AgreementError(
      "ERR_MESSAGE_PROFILE",
      `the message has the profile ${JSON.stringify(value.profile)}; only ${MESSAGE_PROFILE} is understood`,
    );
  }
  const validate = validatorFor("message");
  if (!validate(value)) refuse(describeErrors(validate.errors));
  const raw = value as unknown as Message;
  const dropped = unknownMembers(raw, raw.type);
  const message = dropUnknownMembers(raw);
  const problems = messageRuleViolations(message);
  if (problems.length > 0) refuse(problems);
  return { message, dropped };
};

const finish = ({ message, dropped }: { message: Message; dropped: string[] }): ParsedMessage => {
  const canonical = canonicalJson(message);
  const bytes = encoder.encode(canonical);
  if (bytes.byteLength > MAX_MESSAGE_BYTES) throw tooLarge(bytes.byteLength);
  // A fresh copy from the canonical text: nothing the caller still holds can change it later.
  const copy = JSON.parse(canonical) as Message;
  return Object.freeze({
    message: copy,
    canonical,
    bytes,
    hash: sha256Hex(bytes),
    dropped: Object.freeze(dropped),
  });
};

/**
 * A receiver's parse of a machine part (JSON text or UTF-8 bytes): at most 32 KB, strict JSON,
 * the schema, the profile's rules; unknown members are dropped and listed in `dropped`.
 */
export const parseMessage = (input: string | Uint8Array): ParsedMessage => {
  const size = typeof input === "string" ? encoder.encode(input).byteLength : input.byteLength;
  if (size > MAX_MESSAGE_BYTES) throw tooLarge(size);
  return finish(check(parseJson(input, "the message")));
};

/** The same checks for a value already parsed (e.g. the DataPart of an A2A message). */
export const parseMessageValue = (value: unknown): ParsedMessage => {
  let json: JsonValue;
  let size: number;
  try {
    json = assertJsonValue(value);
    // JCS writes exactly the characters JSON.stringify writes, only in another member order, so
    // the byte count is known before the (slower) canonical form is made.
    size = Buffer.byteLength(JSON.stringify(json), "utf8");
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new AgreementError("ERR_MESSAGE_INVALID", `the message is not JSON data: ${reason}`);
  }
  if (size > MAX_MESSAGE_BYTES) throw tooLarge(size);
  return finish(check(json));
};

/**
 * A sender's check: the message must validate and carry no member the profile does not define,
 * because what is signed must be exactly what a receiver will parse.
 */
export const validateMessage = (value: unknown): ParsedMessage => {
  const parsed = parseMessageValue(value);
  if (parsed.dropped.length > 0) {
    throw new AgreementError(
      "ERR_MESSAGE_INVALID",
      `the message has members this profile does not define: ${parsed.dropped.join(", ")}`,
      parsed.dropped,
    );
  }
  return parsed;
};
