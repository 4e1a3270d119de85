/** Random codes and page tokens: base62, from crypto.randomBytes, long enough to guess never. */
import { randomBytes } from "node:crypto";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** `length` uniformly random base62 characters (~5.95 bits each), from `crypto.randomBytes`. */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const byte of randomBytes(length)) {
      // 248 = 4 × 62: dropping larger bytes keeps every character equally likely.
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

/** 32 base62 characters: ~190 random bits (rule 2 asks for at least 128). */
export const CODE_CHARS = 32;
export const INTENT_CODE_PREFIX = "ic_";
export const INTENT_CODE = /^ic_[0-9A-Za-z]{32,64}$/;
/** A page token (consent, confirm, manage): base62, nothing else, so it survives any URL or mail. */
export const PAGE_TOKEN = /^[0-9A-Za-z]{32,64}$/;

export const newIntentCode = (): string => INTENT_CODE_PREFIX + randomBase62(CODE_CHARS);
export const newPageToken = (): string => randomBase62(CODE_CHARS);
export const newIntentId = (): string => `int_${randomBase62(20)}`;
export const newPseudonym = (): string => `buyer-${randomBase62(10).toLowerCase()}`;

/**
 * A consent token hash once consent has been given (rule 3): the link can no longer give consent
 * (lookups for consent match only the bare hash), but the page can still say "already taken".
 */
export const TAKEN_PREFIX = "taken.";
