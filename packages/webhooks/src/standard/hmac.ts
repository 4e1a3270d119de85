import { createHmac, createSecretKey, hash, type KeyObject } from "node:crypto";

// HMAC-SHA256 as RFC 2104 defines it, H((K ⊕ opad) ‖ H((K ⊕ ipad) ‖ message)), with both padded
// key blocks made once per secret. createHmac builds an Hmac object (a JS stream and an OpenSSL
// context) on every call, which for a small webhook costs more than the hashing; two one-shot
// crypto.hash calls over the ready blocks give the same bytes without it.

const BLOCK = 64; // SHA-256 block size
const DIGEST = 32;

/** A secret made ready for HMAC-SHA256: its two padded blocks, and a KeyObject for large bodies. */
export interface HmacKey {
  /** K ⊕ ipad. */
  readonly inner: Buffer;
  /** K ⊕ opad, then room for the inner digest (rewritten on every call). */
  readonly outer: Buffer;
  readonly keyObject: KeyObject;
}

export function hmacKey(key: Buffer): HmacKey {
  // A key longer than a block is hashed first (RFC 2104 §2); Standard Webhooks secrets never are.
  const block = key.length > BLOCK ? hash("sha256", key, "buffer") : key;
  const inner = Buffer.alloc(BLOCK, 0x36);
  const outer = Buffer.alloc(BLOCK + DIGEST, 0);
  outer.fill(0x5c, 0, BLOCK);
  for (let i = 0; i < block.length; i++) {
    inner[i] = (inner[i] as number) ^ (block[i] as number);
    outer[i] = (outer[i] as number) ^ (block[i] as number);
  }
  return { inner, outer, keyObject: createSecretKey(key) };
}

// The inner hash needs its input in one piece: K ⊕ ipad, the prefix and the body are copied into
// one reused buffer (calls are synchronous, so nothing else can use it meanwhile). Copying is far
// cheaper than hashing; bodies beyond the limit are streamed through createHmac instead.
const SCRATCH_LIMIT = 64 * 1024;
let scratch = Buffer.allocUnsafeSlow(4 * 1024);

/** Base64 HMAC-SHA256 of `prefix‖body` (the prefix as UTF-8). */
export function hmacSha256Base64(key: HmacKey, prefix: string, body: Uint8Array): string {
  const most = BLOCK + prefix.length * 3 + body.byteLength;
  if (most > scratch.length) {
    if (most > SCRATCH_LIMIT) {
      return createHmac("sha256", key.keyObject).update(prefix, "utf8").update(body).digest("base64");
    }
    scratch = Buffer.allocUnsafeSlow(SCRATCH_LIMIT);
  }
  scratch.set(key.inner, 0);
  const bodyAt = BLOCK + scratch.write(prefix, BLOCK, "utf8");
  scratch.set(body, bodyAt);
  const content = new Uint8Array(scratch.buffer, scratch.byteOffset, bodyAt + body.byteLength);
  // "binary" (Latin-1) is the cheapest form of the digest to get back and write: one character a byte.
  key.outer.write(hash("sha256", content, "binary"), BLOCK, "latin1");
  return hash("sha256", key.outer, "base64");
}
