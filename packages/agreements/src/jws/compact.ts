import { CompactSign, compactVerify } from "jose";
import { canonicalBytes } from "../canonical/canonicalize.js";
import { JWS_ALGORITHM } from "../constants.js";
import { AgreementError } from "../errors.js";
import { checkProtectedHeader, type ProtectedHeader } from "./header.js";
import { importPublicKey, type PublicJwk, type SigningKey } from "./keys.js";

const B64URL = /^[A-Za-z0-9_-]*$/;

/** A compact JWS split and its header checked; the signature is not verified yet. */
export interface CompactParts {
  readonly header: ProtectedHeader;
  readonly payload: Uint8Array;
}

const decode = (part: string, what: string): Uint8Array => {
  if (!B64URL.test(part) || part.length % 4 === 1) {
    throw new AgreementError("ERR_JWS_INVALID", `the JWS ${what} is not unpadded base64url`);
  }
  const bytes = Buffer.from(part, "base64url");
  if (bytes.toString("base64url") !== part) {
    throw new AgreementError("ERR_JWS_INVALID", `the JWS ${what} is not in canonical base64url`);
  }
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
};

/** Splits a compact JWS (three parts, attached payload) and checks its protected header. */
export const readCompactJws = (jws: unknown, expectedTyp: string, maxChars: number): CompactParts => {
  if (typeof jws !== "string") throw new AgreementError("ERR_JWS_INVALID", "the JWS is not a string");
  if (jws.length > maxChars) {
    throw new AgreementError(
      "ERR_JWS_INVALID",
      `the JWS is longer than ${maxChars.toLocaleString("en-US")} characters`,
    );
  }
  const parts = jws.split(".");
  if (parts.length !== 3)
    throw new AgreementError("ERR_JWS_INVALID", "the JWS is not in compact form (three parts)");
  const [header, payload, signature] = parts as [string, string, string];
  if (payload === "")
    throw new AgreementError("ERR_JWS_INVALID", "the JWS has a detached payload; it must be attached");
  const signatureBytes = decode(signature, "signature");
  if (signatureBytes.byteLength !== 64) {
    throw new AgreementError("ERR_JWS_INVALID", "the JWS signature is not 64 bytes (Ed25519)");
  }
  return {
    header: checkProtectedHeader(decode(header, "header"), expectedTyp),
    payload: decode(payload, "payload"),
  };
};

/** Verifies the Ed25519 signature of a compact JWS with one public key; throws ERR_JWS_SIGNATURE. */
export const verifyCompactSignature = async (jws: string, jwk: PublicJwk): Promise<void> => {
  const key = await importPublicKey(jwk);
  try {
    await compactVerify(jws, key, { algorithms: [JWS_ALGORITHM] });
  } catch {
    throw new AgreementError(
      "ERR_JWS_SIGNATURE",
      "the signature does not verify with the key the page lists",
    );
  }
};

/**
 * Signs the canonical bytes of a JSON value as a compact JWS with the protected header
 * {alg: EdDSA, kid, jku, typ}. The payload is exactly `canonicalBytes(value)`.
 */
export const signCanonical = (
  value: unknown,
  key: SigningKey,
  header: { jku: string; typ: string },
): Promise<string> => signCanonicalBytes(canonicalBytes(value), key, header);

/** The same for bytes that already are a canonical form (a parsed message's `bytes`). */
export const signCanonicalBytes = (
  bytes: Uint8Array,
  key: SigningKey,
  header: { jku: string; typ: string },
): Promise<string> =>
  new CompactSign(bytes)
    .setProtectedHeader({ alg: JWS_ALGORITHM, kid: key.kid, jku: header.jku, typ: header.typ })
    .sign(key.privateKey);
