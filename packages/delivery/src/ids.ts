import { randomBytes } from "node:crypto";

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** A prefixed id of `length` base62 characters (~5.95 bits each), without dots or dashes. */
export function randomId(prefix: string, length = 24, random: (n: number) => Buffer = randomBytes): string {
  let id = prefix;
  while (id.length < prefix.length + length) {
    for (const byte of random(length)) {
      // 248 = 4 × 62: dropping bytes above it keeps every character equally likely.
      if (byte < 248 && id.length < prefix.length + length) id += ALPHABET[byte % 62];
    }
  }
  return id;
}
