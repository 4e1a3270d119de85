import { createHash, createPrivateKey, createPublicKey, KeyObject } from "node:crypto";
import { exportJWK, generateKeyPair, importJWK } from "jose";
import { AgreementError } from "../errors.js";

/** An Ed25519 public key as a JWK: exactly the members RFC 8037 needs. */
export interface PublicJwk {
  readonly kty: "OKP";
  readonly crv: "Ed25519";
  readonly x: string;
}

/** An Ed25519 private key as a JWK. Only ever read from a file or generated; never sent. */
export interface PrivateJwk extends PublicJwk {
  readonly d: string;
}

/**
 * What a side signs with. The private half is a non-extractable CryptoKey, so it cannot be
 * logged, serialised or exported from here; `kid` is the RFC 7638 thumbprint of `publicJwk`.
 */
export interface SigningKey {
  readonly kid: string;
  readonly publicJwk: PublicJwk;
  readonly privateKey: CryptoKey;
}

const B64URL_32 = /^[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$/;

const refuse = (message: string): never => {
  throw new AgreementError("ERR_KEY_INVALID", message);
};

/** Checks that a value is an Ed25519 public JWK and returns only its RFC 7638 members. */
export const toPublicJwk = (value: unknown): PublicJwk => {
  if (value === null || typeof value !== "object") return refuse("the key is not a JWK object");
  const jwk = value as Record<string, unknown>;
  if (jwk.kty !== "OKP" || jwk.crv !== "Ed25519")
    return refuse("the key is not an Ed25519 key (kty OKP, crv Ed25519)");
  if (typeof jwk.x !== "string" || !B64URL_32.test(jwk.x)) {
    return refuse("the key's x is not 32 bytes of unpadded base64url");
  }
  if (jwk.alg !== undefined && jwk.alg !== "EdDSA" && jwk.alg !== "Ed25519") {
    return refuse(`the key is marked for ${JSON.stringify(jwk.alg)}, not EdDSA`);
  }
  if (jwk.use !== undefined && jwk.use !== "sig") return refuse("the key is not marked for signatures");
  return { kty: "OKP", crv: "Ed25519", x: jwk.x };
};

// Bounded memo tables: a verifier sees few distinct keys, and each entry is a few hundred bytes.
const MAX_MEMO = 1000;
const remember = <V>(table: Map<string, V>, key: string, value: V): V => {
  if (table.size >= MAX_MEMO) table.clear();
  table.set(key, value);
  return value;
};

const thumbprints = new Map<string, string>();

/**
 * RFC 7638 thumbprint (SHA-256, base64url) of an Ed25519 public key, computed in place: the
 * required members in lexicographic order are crv, kty, x, and `x` is base64url, so the JSON needs
 * no escaping. Memoised by `x`, which is the whole key.
 */
export const keyThumbprintSync = (jwk: PublicJwk): string => {
  const found = thumbprints.get(jwk.x);
  if (found !== undefined && jwk.kty === "OKP" && jwk.crv === "Ed25519") return found;
  const checked = toPublicJwk(jwk);
  const json = `{"crv":"Ed25519","kty":"OKP","x":"${checked.x}"}`;
  return remember(thumbprints, checked.x, createHash("sha256").update(json).digest("base64url"));
};

/** The same, as a promise (the published API). */
export const keyThumbprint = async (jwk: PublicJwk): Promise<string> => keyThumbprintSync(jwk);

const publicKeyObjects = new Map<string, KeyObject>();

/** A node:crypto KeyObject for verifying with a public JWK, memoised by `x`. */
export const publicKeyObject = (jwk: PublicJwk): KeyObject => {
  const found = publicKeyObjects.get(jwk.x);
  if (found !== undefined && jwk.kty === "OKP" && jwk.crv === "Ed25519") return found;
  const checked = toPublicJwk(jwk);
  return remember(publicKeyObjects, checked.x, createPublicKey({ key: { ...checked }, format: "jwk" }));
};

const publicCryptoKeys = new Map<string, CryptoKey>();

/** The CryptoKey for verifying with a public JWK (memoised by `x`). */
export const importPublicKey = async (jwk: PublicJwk): Promise<CryptoKey> => {
  const checked = toPublicJwk(jwk);
  const found = publicCryptoKeys.get(checked.x);
  if (found !== undefined) return found;
  return remember(publicCryptoKeys, checked.x, (await importJWK({ ...checked }, "EdDSA")) as CryptoKey);
};

// The private KeyObject behind each SigningKey, out of reach of callers (a KeyObject can be
// exported; the SigningKey's CryptoKey cannot), so a SigningKey still cannot leak its private half.
const privateKeyObjects = new WeakMap<SigningKey, KeyObject>();

/** The node:crypto private key a SigningKey signs with (one-shot `crypto.sign`, no WebCrypto job). */
export const signingKeyObject = (key: SigningKey): KeyObject => {
  let found = privateKeyObjects.get(key);
  if (found === undefined) {
    found = KeyObject.from(key.privateKey);
    privateKeyObjects.set(key, found);
  }
  return found;
};

/**
 * A signing key from an Ed25519 private JWK. The public half is derived from `d` and must equal
 * the `x` given, so a file with mismatched halves is refused instead of signing unverifiably.
 */
export const importSigningKey = async (value: unknown): Promise<SigningKey> => {
  const publicJwk = toPublicJwk(value);
  const d = (value as Record<string, unknown>).d;
  if (typeof d !== "string" || !B64URL_32.test(d))
    return refuse("the private key's d is not 32 bytes of unpadded base64url");
  let derived: string | undefined;
  let privateKeyObject: KeyObject;
  try {
    privateKeyObject = createPrivateKey({
      key: { kty: "OKP", crv: "Ed25519", x: publicJwk.x, d },
      format: "jwk",
    });
    derived = createPublicKey(privateKeyObject).export({ format: "jwk" }).x;
  } catch {
    return refuse("the private key could not be read as Ed25519");
  }
  if (derived !== publicJwk.x) return refuse("the private key's x is not the public key of its d");
  const privateKey = (await importJWK({ kty: "OKP", crv: "Ed25519", x: publicJwk.x, d }, "EdDSA", {
    extractable: false,
  })) as CryptoKey;
  const signingKey: SigningKey = Object.freeze({
    kid: keyThumbprintSync(publicJwk),
    publicJwk: Object.freeze(publicJwk),
    privateKey,
  });
  privateKeyObjects.set(signingKey, privateKeyObject);
  return signingKey;
};

/**
 * A new Ed25519 key pair. The private JWK is returned once, for the caller to store sealed (or,
 * for test keys only, to check in); the SigningKey holds a non-extractable copy.
 */
export const generateSigningKey = async (): Promise<{ signingKey: SigningKey; privateJwk: PrivateJwk }> => {
  const { privateKey } = await generateKeyPair("EdDSA", { extractable: true });
  const jwk = await exportJWK(privateKey);
  const privateJwk: PrivateJwk = { kty: "OKP", crv: "Ed25519", x: jwk.x as string, d: jwk.d as string };
  return { signingKey: await importSigningKey(privateJwk), privateJwk };
};
