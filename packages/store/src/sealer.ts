import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { deriveKey } from "./derive.js";
import { StoreError } from "./errors.js";
import type { Keyring, RandomBytes } from "./keyring.js";

/**
 * Secrets at rest: AES-256-GCM with a random 96-bit nonce per value.
 *
 * A sealed value is one ASCII string, storable in a text column:
 *
 *     v1.<kid>.<base64url( nonce(12) || ciphertext || tag(16) )>
 *
 * `kid` names the master key (so old values open after rotation). The sealing key is derived from
 * that master key with HKDF-SHA256 (info `seal/aes-256-gcm/v1`). The GCM associated data is
 * `"doorbell-seal:v1:" || kid || 0x00 || associatedData`: the caller's associated data binds the
 * value to its row and purpose (e.g. `"delivery.endpoint.secret:42"`), so a value copied into
 * another row or column fails to open.
 */
export interface Sealer {
  readonly currentKeyId: string;
  /** Seals with the current key. */
  seal(plaintext: string | Uint8Array, associatedData: string | Uint8Array): string;
  /** Opens a value sealed under any key in the keyring. */
  open(sealed: string, associatedData: string | Uint8Array): Buffer;
  /** `open`, decoded as UTF-8. */
  openText(sealed: string, associatedData: string | Uint8Array): string;
  /** The key id a sealed value names (checks the format, not the authenticity). */
  keyIdOf(sealed: string): string;
  /** True when the value is sealed under a key other than the current one. */
  needsReseal(sealed: string): boolean;
  /** Opens and seals again under the current key; returns the value unchanged if already current. */
  reseal(sealed: string, associatedData: string | Uint8Array): string;
}

export interface SealerOptions {
  /** Nonce source (default `crypto.randomBytes`). */
  random?: RandomBytes;
}

const VERSION = "v1";
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const SEAL_INFO = "seal/aes-256-gcm/v1";
const AAD_PREFIX = Buffer.from("doorbell-seal:v1:", "utf8");
const SEALED = /^v1\.([A-Za-z0-9_-]{1,32})\.([A-Za-z0-9_-]+)$/;

function bytes(value: string | Uint8Array, what: string): Buffer {
  if (typeof value === "string") return Buffer.from(value, "utf8");
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  throw new StoreError("ERR_STORE_CONFIG", `${what} must be a string or bytes`);
}

function parse(sealed: string): { keyId: string; body: Buffer } {
  const match = typeof sealed === "string" ? SEALED.exec(sealed) : null;
  if (match === null) {
    throw new StoreError(
      "ERR_STORE_SEALED_MALFORMED",
      `the value is not a sealed value (${VERSION}.<kid>.<data>)`,
    );
  }
  const encoded = match[2] as string;
  const body = Buffer.from(encoded, "base64url");
  if (body.toString("base64url") !== encoded) {
    throw new StoreError("ERR_STORE_SEALED_MALFORMED", "the sealed value is not canonical base64url");
  }
  if (body.length < NONCE_BYTES + TAG_BYTES) {
    throw new StoreError("ERR_STORE_SEALED_MALFORMED", "the sealed value is too short");
  }
  return { keyId: match[1] as string, body };
}

export function createSealer(keyring: Keyring, options: SealerOptions = {}): Sealer {
  const random = options.random ?? randomBytes;
  const keys = new Map<string, Buffer>();
  const keyFor = (keyId: string): Buffer => {
    let key = keys.get(keyId);
    if (key === undefined) {
      key = deriveKey(keyring, keyId, SEAL_INFO); // throws ERR_STORE_UNKNOWN_KEY
      keys.set(keyId, key);
    }
    return key;
  };
  const aad = (keyId: string, associatedData: string | Uint8Array): Buffer =>
    Buffer.concat([
      AAD_PREFIX,
      Buffer.from(keyId, "utf8"),
      Buffer.of(0),
      bytes(associatedData, "associated data"),
    ]);

  const seal = (plaintext: string | Uint8Array, associatedData: string | Uint8Array): string => {
    const keyId = keyring.currentKeyId;
    const nonce = Buffer.from(random(NONCE_BYTES));
    if (nonce.length !== NONCE_BYTES) {
      throw new StoreError("ERR_STORE_CONFIG", "the random source returned too few bytes");
    }
    const cipher = createCipheriv("aes-256-gcm", keyFor(keyId), nonce, { authTagLength: TAG_BYTES });
    cipher.setAAD(aad(keyId, associatedData));
    const ciphertext = Buffer.concat([cipher.update(bytes(plaintext, "plaintext")), cipher.final()]);
    const body = Buffer.concat([nonce, ciphertext, cipher.getAuthTag()]);
    return `${VERSION}.${keyId}.${body.toString("base64url")}`;
  };

  const open = (sealed: string, associatedData: string | Uint8Array): Buffer => {
    const { keyId, body } = parse(sealed);
    const key = keyFor(keyId);
    const nonce = body.subarray(0, NONCE_BYTES);
    const tag = body.subarray(body.length - TAG_BYTES);
    const ciphertext = body.subarray(NONCE_BYTES, body.length - TAG_BYTES);
    try {
      const decipher = createDecipheriv("aes-256-gcm", key, nonce, { authTagLength: TAG_BYTES });
      decipher.setAAD(aad(keyId, associatedData));
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(ciphertext), decipher.final()]);
    } catch {
      // No cause: node's message is generic, but nothing from the value or key belongs in an error.
      throw new StoreError(
        "ERR_STORE_UNSEAL_FAILED",
        `a sealed value (key ${keyId}) failed authentication: it was altered, belongs to other associated data, or the key with this id changed`,
      );
    }
  };

  return {
    currentKeyId: keyring.currentKeyId,
    seal,
    open,
    openText: (sealed, associatedData) => open(sealed, associatedData).toString("utf8"),
    keyIdOf: (sealed) => parse(sealed).keyId,
    needsReseal: (sealed) => parse(sealed).keyId !== keyring.currentKeyId,
    reseal: (sealed, associatedData) => {
      if (parse(sealed).keyId === keyring.currentKeyId) {
        open(sealed, associatedData); // still authenticate: never pass a forged value along
        return sealed;
      }
      const plaintext = open(sealed, associatedData);
      try {
        return seal(plaintext, associatedData);
      } finally {
        plaintext.fill(0);
      }
    },
  };
}
