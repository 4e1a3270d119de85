import serialize from "canonicalize";
import { AgreementError } from "../errors.js";
import { assertJsonValue } from "./json-value.js";

const encoder = new TextEncoder();

/**
 * RFC 8785 (JCS): members sorted by UTF-16 code units, numbers as ECMAScript prints them, no
 * whitespace, no Unicode normalisation. Lone surrogates and non-JSON values are refused, never
 * replaced, so two implementations can never sign different bytes for the same value.
 */
export const canonicalJson = (value: unknown): string => {
  assertJsonValue(value);
  let text: string | undefined;
  try {
    text = serialize(value);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new AgreementError(
      "ERR_CANONICAL_INPUT",
      `the value has no canonical form: ${reason.toLowerCase()}`,
    );
  }
  if (text === undefined) throw new AgreementError("ERR_CANONICAL_INPUT", "the value has no canonical form");
  return text;
};

/** The UTF-8 bytes of the canonical form: what is hashed and signed. */
export const canonicalBytes = (value: unknown): Uint8Array => encoder.encode(canonicalJson(value));
