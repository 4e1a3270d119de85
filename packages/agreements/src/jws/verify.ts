import { MAX_MESSAGE_JWS_CHARS, MESSAGE_JWS_TYPE } from "../constants.js";
import { AgreementError } from "../errors.js";
import { type ParsedMessage, parseMessage } from "../message/parse.js";
import { readCompactJws, verifyCompactSignature } from "./compact.js";
import { keyPageParty, type ProtectedHeader } from "./header.js";
import { keyThumbprint } from "./keys.js";
import type { KeyResolver, TrustedKey } from "./resolver.js";

export interface VerifiedMessage {
  readonly parsed: ParsedMessage;
  readonly header: ProtectedHeader;
  readonly key: TrustedKey;
}

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean =>
  a.byteLength === b.byteLength && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);

/**
 * Reads a signed message without trusting it yet: the header is checked and the payload must be a
 * valid message whose canonical form is byte for byte the payload ("a signed payload counts only
 * if it equals the canonical form of the parsed message", so an unknown member breaks it).
 */
export const readSignedMessage = (jws: unknown): { header: ProtectedHeader; parsed: ParsedMessage } => {
  const { header, payload } = readCompactJws(jws, MESSAGE_JWS_TYPE, MAX_MESSAGE_JWS_CHARS);
  const parsed = parseMessage(payload);
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
  const page = keyPageParty(header.jku);
  const party = parsed.message.from.party;
  if (page && party !== undefined && party !== page.party) {
    throw new AgreementError(
      "ERR_JWS_HEADER",
      `the message is from ${party} but is signed with the key page of ${page.party}`,
    );
  }
  return { header, parsed };
};

/**
 * Verifies a signed message: its form (above), the key the trust rule gives for its jku and kid
 * (judged at the message's iat), that the key's thumbprint is the kid, and the Ed25519 signature.
 */
export const verifyMessage = async (jws: string, resolveKey: KeyResolver): Promise<VerifiedMessage> => {
  const { header, parsed } = readSignedMessage(jws);
  const key = await resolveKey({
    jku: header.jku,
    kid: header.kid,
    signer: parsed.message.from,
    issuedAt: parsed.message.iat,
  });
  if ((await keyThumbprint(key.jwk)) !== header.kid) {
    throw new AgreementError("ERR_KEY_NOT_FOUND", "the key found for the kid has a different thumbprint");
  }
  await verifyCompactSignature(jws, key.jwk);
  return { parsed, header, key };
};
