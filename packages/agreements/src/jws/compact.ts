import { sign as edSign, verify as edVerify } from "node:crypto";
import { canonicalJson } from "../canonical/canonicalize.js";
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

/** A compact JWS split, its header and signature checked, its payload still in base64url. */
export interface SplitJws {
  readonly header: ProtectedHeader;
  /** The payload part as it is in the JWS; not yet checked. */
  readonly encodedPayload: string;
  readonly signingInput: string;
  readonly signature: Uint8Array;
}

/**
 * Splits a compact JWS (three parts, attached payload) and checks its protected header and its
 * signature's form, leaving the payload encoded: a caller that knows what the payload must be
 * compares its own encoding with it (the canonical base64url of the expected bytes can only equal
 * a payload part that is itself canonical), without decoding kilobytes.
 */
export const splitCompactJws = (jws: unknown, expectedTyp: string, maxChars: number): SplitJws => {
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
    encodedPayload: payload,
    signingInput: jws.slice(0, second),
    signature,
  };
};

/** Splits a compact JWS (three parts, attached payload) and checks its protected header. */
export const readCompactJws = (jws: unknown, expectedTyp: string, maxChars: number): CompactParts => {
  const { header, encodedPayload, signingInput, signature } = splitCompactJws(jws, expectedTyp, maxChars);
  return { header, payload: decode(encodedPayload, "payload"), signingInput, signature };
};

// Signing inputs are ASCII strings and crypto.sign/verify want bytes. One reused buffer holds them
// (the one-shot calls are synchronous, so nothing else can use it meanwhile): a record's seal
// covers kilobytes, and a buffer that size made per call is not taken from Node's small pool.
const SCRATCH_LIMIT = 64 * 1024;
let scratch = Buffer.allocUnsafe(8 * 1024);

/** The latin1 bytes of an ASCII string, in the scratch buffer: valid until the next call. */
const asciiBytes = (text: string): Buffer => {
  if (text.length > SCRATCH_LIMIT) return Buffer.from(text, "latin1");
  if (text.length > scratch.length) scratch = Buffer.allocUnsafe(SCRATCH_LIMIT);
  return scratch.subarray(0, scratch.write(text, 0, "latin1"));
};

/** Whether the Ed25519 signature of split JWS parts verifies with one public key (one-shot, no copy of the key). */
export const signatureVerifies = (parts: Pick<CompactParts, "signingInput" | "signature">, jwk: PublicJwk) =>
  edVerify(null, asciiBytes(parts.signingInput), publicKeyObject(jwk), parts.signature);

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
 * {alg: EdDSA, kid, jku, typ}. The payload is exactly `canonicalBytes(value)`. A value that has
 * no canonical form throws at once, not as a rejected promise.
 */
export const signCanonical = (
  value: unknown,
  key: SigningKey,
  header: { jku: string; typ: string },
): Promise<string> => Promise.resolve(signCanonicalText(canonicalJson(value), key, header));

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

/** The same for bytes that already are a canonical form. */
export const signCanonicalBytes = async (
  bytes: Uint8Array,
  key: SigningKey,
  header: { jku: string; typ: string },
): Promise<string> =>
  signEncodedPayload(
    Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64url"),
    key,
    header,
  );

/** The same for a text that already is a canonical form (a parsed message's `canonical`). */
export const signCanonicalText = (
  canonical: string,
  key: SigningKey,
  header: { jku: string; typ: string },
): string => signEncodedPayload(base64urlOfText(canonical), key, header);

/** The base64url of a text's UTF-8 bytes, encoded through the scratch buffer (no copy kept). */
const base64urlOfText = (text: string): string => {
  const most = text.length * 3;
  if (most > SCRATCH_LIMIT) return Buffer.from(text, "utf8").toString("base64url");
  if (most > scratch.length) scratch = Buffer.allocUnsafe(SCRATCH_LIMIT);
  return scratch.toString("base64url", 0, scratch.write(text, 0, "utf8"));
};

/** Synchronous: node:crypto's one-shot Ed25519 sign with the cached KeyObject. */
const signEncodedPayload = (
  payload: string,
  key: SigningKey,
  header: { jku: string; typ: string },
): string => {
  const signingInput = `${encodedHeader(key, header.jku, header.typ)}.${payload}`;
  const signature = edSign(null, asciiBytes(signingInput), signingKeyObject(key));
  return `${signingInput}.${signature.toString("base64url")}`;
};
