import { sign as edSign, verify as edVerify } from "node:crypto";
import { canonicalBytes } from "../canonical/canonicalize.js";
import { JWS_ALGORITHM } from "../constants.js";
import { AgreementError } from "../errors.js";
import { checkProtectedHeader, type ProtectedHeader } from "./header.js";
import { type PublicJwk, publicKeyObject, type SigningKey, signingKeyObject } from "./keys.js";

const B64URL = /^[A-Za-z0-9_-]*$/;

/** A compact JWS split and its header checked; the signature is not verified yet. */
export interface CompactParts {
  readonly header: ProtectedHeader;
  readonly payload: Uint8Array;
  /** `BASE64URL(header) "." BASE64URL(payload)`: the bytes the signature covers (ASCII). */
  readonly signingInput: string;
  readonly signature: Uint8Array;
}

// The last character of unpadded base64url whose unused low bits are zero: 4 bits unused when
// the length is 2 mod 4, 2 bits when it is 3 mod 4. Any other last character is a second
// spelling of the same bytes, which a signature must not have.
const LAST_OF_2 = /[AQgw]$/;
const LAST_OF_3 = /[AEIMQUYcgkosw048]$/;

const decode = (part: string, what: string): Uint8Array => {
  const rest = part.length % 4;
  if (!B64URL.test(part) || rest === 1) {
    throw new AgreementError("ERR_JWS_INVALID", `the JWS ${what} is not unpadded base64url`);
  }
  if ((rest === 2 && !LAST_OF_2.test(part)) || (rest === 3 && !LAST_OF_3.test(part))) {
    throw new AgreementError("ERR_JWS_INVALID", `the JWS ${what} is not in canonical base64url`);
  }
  const bytes = Buffer.from(part, "base64url");
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
};

// Protected headers repeat (one signer, one key page), so each is read once.
const headers = new Map<string, ProtectedHeader>();

const headerOf = (part: string, expectedTyp: string): ProtectedHeader => {
  const memo = `${expectedTyp} ${part}`;
  const found = headers.get(memo);
  if (found !== undefined) return found;
  const header = Object.freeze(checkProtectedHeader(decode(part, "header"), expectedTyp));
  if (headers.size >= 1000) headers.clear();
  headers.set(memo, header);
  return header;
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
  const first = jws.indexOf(".");
  const second = first < 0 ? -1 : jws.indexOf(".", first + 1);
  if (second < 0 || jws.indexOf(".", second + 1) >= 0)
    throw new AgreementError("ERR_JWS_INVALID", "the JWS is not in compact form (three parts)");
  const header = jws.slice(0, first);
  const payload = jws.slice(first + 1, second);
  if (payload === "")
    throw new AgreementError("ERR_JWS_INVALID", "the JWS has a detached payload; it must be attached");
  const signature = decode(jws.slice(second + 1), "signature");
  if (signature.byteLength !== 64) {
    throw new AgreementError("ERR_JWS_INVALID", "the JWS signature is not 64 bytes (Ed25519)");
  }
  return {
    header: headerOf(header, expectedTyp),
    payload: decode(payload, "payload"),
    signingInput: jws.slice(0, second),
    signature,
  };
};

/** Whether the Ed25519 signature of split JWS parts verifies with one public key (one-shot, no copy of the key). */
export const signatureVerifies = (parts: Pick<CompactParts, "signingInput" | "signature">, jwk: PublicJwk) =>
  edVerify(null, Buffer.from(parts.signingInput, "latin1"), publicKeyObject(jwk), parts.signature);

const refuseSignature = (): never => {
  throw new AgreementError("ERR_JWS_SIGNATURE", "the signature does not verify with the key the page lists");
};

/** Verifies the Ed25519 signature of a compact JWS with one public key; throws ERR_JWS_SIGNATURE. */
export const verifyCompactSignature = async (jws: string, jwk: PublicJwk): Promise<void> => {
  const parts = jws.split(".");
  if (parts.length !== 3) return refuseSignature();
  const [header, payload, signature] = parts as [string, string, string];
  const bytes = Buffer.from(signature, "base64url");
  if (bytes.byteLength !== 64 || bytes.toString("base64url") !== signature) return refuseSignature();
  if (!signatureVerifies({ signingInput: `${header}.${payload}`, signature: bytes }, jwk)) refuseSignature();
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

// The encoded header of each (key, typ, jku): a signer uses one or two. Nested maps keyed by the
// caller's own strings, so a lookup builds no new string.
const encodedHeaders = new WeakMap<SigningKey, Map<string, Map<string, string>>>();

const encodedHeader = (key: SigningKey, jku: string, typ: string): string => {
  let byTyp = encodedHeaders.get(key);
  if (byTyp === undefined) {
    byTyp = new Map();
    encodedHeaders.set(key, byTyp);
  }
  let byJku = byTyp.get(typ);
  if (byJku === undefined) {
    byJku = new Map();
    byTyp.set(typ, byJku);
  }
  let found = byJku.get(jku);
  if (found === undefined) {
    // Member order alg, kid, jku, typ: what every signature made here has always carried.
    found = Buffer.from(JSON.stringify({ alg: JWS_ALGORITHM, kid: key.kid, jku, typ })).toString("base64url");
    if (byJku.size >= 100) byJku.clear();
    byJku.set(jku, found);
  }
  return found;
};

/** The same for bytes that already are a canonical form (a parsed message's `bytes`). */
export const signCanonicalBytes = async (
  bytes: Uint8Array,
  key: SigningKey,
  header: { jku: string; typ: string },
): Promise<string> => {
  const payload = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64url");
  const signingInput = `${encodedHeader(key, header.jku, header.typ)}.${payload}`;
  const signature = edSign(null, Buffer.from(signingInput, "latin1"), signingKeyObject(key));
  return `${signingInput}.${signature.toString("base64url")}`;
};
