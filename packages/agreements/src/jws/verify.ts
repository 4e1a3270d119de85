import { MAX_MESSAGE_JWS_CHARS, MESSAGE_JWS_TYPE } from "../constants.js";
import { AgreementError } from "../errors.js";
import {
  type ParsedMessage,
  parseCanonicalPayload,
  parseMessage,
  parseMessageText,
} from "../message/parse.js";
import { type CompactParts, readCompactJws, signatureVerifies } from "./compact.js";
import { keyPageOf, type ProtectedHeader } from "./header.js";
import { keyThumbprintSync } from "./keys.js";
import type { KeyResolver, TrustedKey } from "./resolver.js";

export interface VerifiedMessage {
  readonly parsed: ParsedMessage;
  readonly header: ProtectedHeader;
  readonly key: TrustedKey;
}

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean =>
  a === b || (a.byteLength === b.byteLength && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b));

/**
 * A signed payload counts only if it is byte for byte the canonical form of what it parses to, so
 * the strict reader's extra checks (UTF-8 validity, byte order mark, duplicate members) cannot
 * change the outcome of one that passes: any of them makes it differ from its canonical form. So
 * the payload is first read the short way (parseCanonicalPayload: it already is the canonical
 * form of a message without unknown members), then plainly, and only one that passes neither is
 * read again strictly, for the precise reason.
 */
const parseSignedPayload = (payload: Uint8Array): ParsedMessage => {
  const canonical = parseCanonicalPayload(payload);
  if (canonical !== undefined) return canonical;
  try {
    const text = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString("utf8");
    const parsed = parseMessageText(text, payload.byteLength);
    if (sameBytes(parsed.bytes, payload)) return parsed;
  } catch {
    // the strict reader below says why
  }
  return parseMessage(payload);
};

/**
 * Reads a signed message without trusting it yet: the header is checked and the payload must be a
 * valid message whose canonical form is byte for byte the payload ("a signed payload counts only
 * if it equals the canonical form of the parsed message", so an unknown member breaks it).
 */
export const readSignedMessage = (jws: unknown): { header: ProtectedHeader; parsed: ParsedMessage } => {
  const { header, parsed } = readSignedParts(jws);
  return { header, parsed };
};

/** The same, keeping the split JWS so its signature can be verified without splitting it again. */
export const readSignedParts = (
  jws: unknown,
): { header: ProtectedHeader; parsed: ParsedMessage; parts: CompactParts } => {
  const parts = readCompactJws(jws, MESSAGE_JWS_TYPE, MAX_MESSAGE_JWS_CHARS);
  const { header, payload } = parts;
  const parsed = parseSignedPayload(payload);
  if (!sameBytes(parsed.bytes, payload)) {
    const why =
      parsed.dropped.length > 0
        ? `it carries members the profile does not define (${parsed.dropped.join(", ")})`
        : "it is not in RFC 8785 form";
    throw new AgreementError(
      "ERR_NOT_CANONICAL",
      `the signed payload is not the canonical form of the parsed message: ${why}`,
    );
  }
  const page = keyPageOf(header.jku);
  const party = parsed.message.from.party;
  if (page && party !== undefined && party !== page.party) {
    throw new AgreementError(
      "ERR_JWS_HEADER",
      `the message is from ${party} but is signed with the key page of ${page.party}`,
    );
  }
  return { header, parsed, parts };
};

/**
 * Verifies a signed message: its form (above), the key the trust rule gives for its jku and kid
 * (judged at the message's iat), that the key's thumbprint is the kid, and the Ed25519 signature.
 */
export const verifyMessage = async (jws: string, resolveKey: KeyResolver): Promise<VerifiedMessage> => {
  const { header, parsed, parts } = readSignedParts(jws);
  const key = await resolveKey({
    jku: header.jku,
    kid: header.kid,
    signer: parsed.message.from,
    issuedAt: parsed.message.iat,
  });
  if (keyThumbprintSync(key.jwk) !== header.kid) {
    throw new AgreementError("ERR_KEY_NOT_FOUND", "the key found for the kid has a different thumbprint");
  }
  if (!signatureVerifies(parts, key.jwk)) {
    throw new AgreementError(
      "ERR_JWS_SIGNATURE",
      "the signature does not verify with the key the page lists",
    );
  }
  return { parsed, header, key };
};
