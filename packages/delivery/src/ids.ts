import { randomBytes } from "node:crypto";

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** Random bytes drawn 4 KiB at a time: one `randomBytes` call per ~150 ids instead of one per id. */
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let offset = 0;

function pooledRandom(n: number): Buffer {
  if (offset + n > pool.length) {
    pool = randomBytes(Math.max(POOL_BYTES, n));
    offset = 0;
  }
  // A copy: the bytes are consumed once and never handed out again.
  const bytes = Buffer.from(pool.subarray(offset, offset + n));
  offset += n;
  return bytes;
}

/** A prefixed id of `length` base62 characters (~5.95 bits each), without dots or dashes. */
export function randomId(prefix: string, length = 24, random: (n: number) => Buffer = pooledRandom): string {
  let id = prefix;
  while (id.length < prefix.length + length) {
    for (const byte of random(length)) {
      // 248 = 4 × 62: dropping bytes above it keeps every character equally likely.
      if (byte < 248 && id.length < prefix.length + length) id += ALPHABET[byte % 62];
    }
  }
  return id;
}
