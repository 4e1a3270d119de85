import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
} from "node:crypto";
import { decodeBase64Strict } from "./bytes.js";
import { WebhookError } from "./errors.js";

/** Standard Webhooks bounds for symmetric secrets (spec "Signature scheme"). */
export const MIN_SECRET_BYTES = 24;
export const MAX_SECRET_BYTES = 64;

const SECRET_PREFIX = "whsec_";
const SIGNING_KEY_PREFIX = "whsk_";
const PUBLIC_KEY_PREFIX = "whpk_";

// DER headers that turn raw Ed25519 bytes into PKCS#8 / SPKI (RFC 8410), so node:crypto can load them.
const PKCS8_ED25519_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");
const SPKI_ED25519_PREFIX = Buffer.from("302a300506032b6570032100", "hex");

/** Decodes a `whsec_…` secret (the prefix is optional, as in every reference library) to its raw bytes. */
export function decodeSecret(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  const bytes = decodeBase64Strict(encoded);
  if (!bytes || encoded.length === 0) {
    throw new WebhookError("ERR_WEBHOOK_INVALID_SECRET", "the secret is not whsec_ followed by base64");
  }
  if (bytes.length < MIN_SECRET_BYTES || bytes.length > MAX_SECRET_BYTES) {
    throw new WebhookError(
      "ERR_WEBHOOK_INVALID_SECRET",
      `the secret decodes to ${bytes.length} bytes; Standard Webhooks secrets are ${MIN_SECRET_BYTES}–${MAX_SECRET_BYTES} bytes`,
    );
  }
  return bytes;
}

/** A fresh `whsec_` secret of 32 random bytes. */
export function generateSecret(bytes = 32): string {
  if (bytes < MIN_SECRET_BYTES || bytes > MAX_SECRET_BYTES) {
    throw new WebhookError(
      "ERR_WEBHOOK_INVALID_SECRET",
      `a secret must be ${MIN_SECRET_BYTES}–${MAX_SECRET_BYTES} bytes`,
    );
  }
  return SECRET_PREFIX + randomBytes(bytes).toString("base64");
}

function decodePrefixed(value: string, prefix: string, what: string): Buffer {
  if (!value.startsWith(prefix)) {
    throw new WebhookError("ERR_WEBHOOK_INVALID_KEY", `${what} must start with ${prefix}`);
  }
  const bytes = decodeBase64Strict(value.slice(prefix.length));
  if (!bytes)
    throw new WebhookError("ERR_WEBHOOK_INVALID_KEY", `${what} is not ${prefix} followed by base64`);
  return bytes;
}

function publicKeyFromRaw(raw: Buffer): KeyObject {
  return createPublicKey({ key: Buffer.concat([SPKI_ED25519_PREFIX, raw]), format: "der", type: "spki" });
}

/**
 * Loads a `whsk_` Ed25519 signing key. Both encodings in use are accepted: the 32-byte seed
 * (Python PR #304) and the 64-byte seed‖public key of Svix; in the latter the public half must match.
 */
export function signingKeyObject(key: string): KeyObject {
  const bytes = decodePrefixed(key, SIGNING_KEY_PREFIX, "a v1a signing key");
  if (bytes.length !== 32 && bytes.length !== 64) {
    throw new WebhookError(
      "ERR_WEBHOOK_INVALID_KEY",
      `a whsk_ key is a 32-byte seed or a 64-byte seed and public key, not ${bytes.length} bytes`,
    );
  }
  const privateKey = createPrivateKey({
    key: Buffer.concat([PKCS8_ED25519_PREFIX, bytes.subarray(0, 32)]),
    format: "der",
    type: "pkcs8",
  });
  if (bytes.length === 64) {
    const derived = rawPublicKey(createPublicKey(privateKey));
    if (!derived.equals(bytes.subarray(32))) {
      throw new WebhookError(
        "ERR_WEBHOOK_INVALID_KEY",
        "the public half of this whsk_ key does not belong to its seed",
      );
    }
  }
  return privateKey;
}

/** Loads a `whpk_` Ed25519 public key (32 raw bytes). */
export function publicKeyObject(key: string): KeyObject {
  const bytes = decodePrefixed(key, PUBLIC_KEY_PREFIX, "a v1a public key");
  if (bytes.length !== 32) {
    throw new WebhookError("ERR_WEBHOOK_INVALID_KEY", `a whpk_ key is 32 bytes, not ${bytes.length}`);
  }
  return publicKeyFromRaw(bytes);
}

function rawPublicKey(key: KeyObject): Buffer {
  return key.export({ format: "der", type: "spki" }).subarray(SPKI_ED25519_PREFIX.length);
}

/** A fresh Ed25519 pair: `whsk_` in the 64-byte seed‖public form Svix uses, and its `whpk_`. */
export function generateSigningKeyPair(): { signingKey: string; publicKey: string } {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const seed = privateKey.export({ format: "der", type: "pkcs8" }).subarray(PKCS8_ED25519_PREFIX.length);
  const pub = rawPublicKey(publicKey);
  return {
    signingKey: SIGNING_KEY_PREFIX + Buffer.concat([seed, pub]).toString("base64"),
    publicKey: PUBLIC_KEY_PREFIX + pub.toString("base64"),
  };
}

/** The `whpk_` public key that belongs to a `whsk_` signing key. */
export function publicKeyOf(signingKey: string): string {
  return PUBLIC_KEY_PREFIX + rawPublicKey(createPublicKey(signingKeyObject(signingKey))).toString("base64");
}
