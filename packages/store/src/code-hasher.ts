import { createHmac, timingSafeEqual } from "node:crypto";
import { deriveKey } from "./derive.js";
import { StoreError } from "./errors.js";
import type { Keyring } from "./keyring.js";

/**
 * Keyed hashes for codes that must be found again but never stored in clear (intent codes,
 * consent-link codes). HMAC-SHA256 under a key derived per purpose with HKDF from the master key
 * (info `code-hash/v1/<purpose>`), so it differs from the sealing key and from other purposes'.
 *
 * A stored hash is `h1.<kid>.<base64url(hmac)>`. A hash cannot be recomputed without the code, so
 * retire a key only when every code hashed under it has expired; until then keep it in the
 * keyring and look codes up with `lookupHashes` (one candidate per key).
 *
 * The code is hashed as given (UTF-8): normalise it first (case, dashes, spaces) in one place.
 */
export interface CodeHasher {
  readonly purpose: string;
  /** The hash to store, under the current key. */
  hash(code: string): string;
  /** Every hash the code could be stored under, current key first: `where code_hash in (...)`. */
  lookupHashes(code: string): string[];
  /** Whether `stored` is this code's hash (constant time in the code; unknown key id → false). */
  verify(code: string, stored: string): boolean;
}

const PURPOSE = /^[a-z0-9][a-z0-9._:-]{0,63}$/;
const STORED = /^h1\.([A-Za-z0-9_-]{1,32})\.([A-Za-z0-9_-]{43})$/;

export function createCodeHasher(keyring: Keyring, purpose: string): CodeHasher {
  if (typeof purpose !== "string" || !PURPOSE.test(purpose)) {
    throw new StoreError(
      "ERR_STORE_CODE_HASH_INVALID",
      "a code hash purpose is 1 to 64 lower-case letters, digits, '.', '_', ':' or '-'",
    );
  }
  const keys = new Map<string, Buffer>();
  const keyFor = (keyId: string): Buffer => {
    let key = keys.get(keyId);
    if (key === undefined) {
      key = deriveKey(keyring, keyId, `code-hash/v1/${purpose}`);
      keys.set(keyId, key);
    }
    return key;
  };
  const hashWith = (keyId: string, code: string): string => {
    if (typeof code !== "string")
      throw new StoreError("ERR_STORE_CODE_HASH_INVALID", "a code must be a string");
    const mac = createHmac("sha256", keyFor(keyId)).update(code, "utf8").digest("base64url");
    return `h1.${keyId}.${mac}`;
  };
  return {
    purpose,
    hash: (code) => hashWith(keyring.currentKeyId, code),
    lookupHashes: (code) => keyring.keyIds.map((keyId) => hashWith(keyId, code)),
    verify: (code, stored) => {
      const match = typeof stored === "string" ? STORED.exec(stored) : null;
      if (match === null) return false;
      const keyId = match[1] as string;
      if (!keyring.has(keyId)) return false;
      return constantTimeEqual(hashWith(keyId, code), stored);
    },
  };
}

/**
 * Compares two secrets without an early exit on the first differing byte. Inputs of different
 * lengths are unequal; only the length can leak, which is public for MACs and fixed-size codes.
 */
export function constantTimeEqual(a: string | Uint8Array, b: string | Uint8Array): boolean {
  const left =
    typeof a === "string" ? Buffer.from(a, "utf8") : Buffer.from(a.buffer, a.byteOffset, a.byteLength);
  const right =
    typeof b === "string" ? Buffer.from(b, "utf8") : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  if (left.length !== right.length) {
    timingSafeEqual(left, left);
    return false;
  }
  return timingSafeEqual(left, right);
}
