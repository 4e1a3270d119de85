/**
 * The forwarder's codes and the one secret it keeps for the agent.
 *
 * A forwarder code is `fc_` + 32 base62 characters (~190 random bits; the push profile asks for
 * 128). The holder's intentCode is sealed under it: AES-256-GCM with a key derived by
 * HKDF-SHA256(ikm = forwarder code, salt = record id, info below), the record id as associated
 * data. The forwarder never stores the forwarder code (only its keyed hash, under its own
 * keyring), so the holder's code opens only while the agent is there to pass its code (§7 rule 1).
 * No other copy exists: nothing the forwarder stores opens to it with its keyring alone.
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from "node:crypto";

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const CODE_LENGTH = 32;
export const FORWARDER_CODE = /^fc_[0-9A-Za-z]{32}$/;

const HKDF_INFO = Buffer.from("doorbell/forwarder/holder-code/v1", "utf8");
const AAD_PREFIX = "doorbell-forwarder:holder-code:v1:";
const SEALED = /^c1\.([A-Za-z0-9_-]+)$/;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/** `prefix` + `length` base62 characters, rejection-sampled so every character is equally likely. */
export function randomBase62(prefix: string, length: number, random: (n: number) => Buffer = randomBytes) {
  let out = prefix;
  while (out.length < prefix.length + length) {
    for (const byte of random(length)) {
      // 248 = 4 × 62: bytes above it would favour the first characters.
      if (byte < 248 && out.length < prefix.length + length) out += ALPHABET[byte % 62];
    }
  }
  return out;
}

export const mintForwarderCode = (): string => randomBase62("fc_", CODE_LENGTH);

/** Refuses a malformed code before any query, like the holder does for its own codes. */
export const isForwarderCode = (code: unknown): code is string =>
  typeof code === "string" && FORWARDER_CODE.test(code);

function keyFor(code: string, recordId: string): Buffer {
  return Buffer.from(
    hkdfSync("sha256", Buffer.from(code, "utf8"), Buffer.from(recordId, "utf8"), HKDF_INFO, 32),
  );
}

/** Seals `plaintext` so that only the bearer of `code` can open it, bound to `recordId`. */
export function sealUnderCode(plaintext: string, code: string, recordId: string): string {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv("aes-256-gcm", keyFor(code, recordId), nonce, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(AAD_PREFIX + recordId, "utf8"));
  const body = Buffer.concat([nonce, cipher.update(plaintext, "utf8"), cipher.final(), cipher.getAuthTag()]);
  return `c1.${body.toString("base64url")}`;
}

/** Opens a value sealed by `sealUnderCode`; undefined for the wrong code, record or an altered value. */
export function openUnderCode(sealed: string, code: string, recordId: string): string | undefined {
  const match = SEALED.exec(sealed);
  if (match === null) return undefined;
  const body = Buffer.from(match[1] as string, "base64url");
  if (body.length < NONCE_BYTES + TAG_BYTES) return undefined;
  try {
    const decipher = createDecipheriv("aes-256-gcm", keyFor(code, recordId), body.subarray(0, NONCE_BYTES), {
      authTagLength: TAG_BYTES,
    });
    decipher.setAAD(Buffer.from(AAD_PREFIX + recordId, "utf8"));
    decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
    return Buffer.concat([
      decipher.update(body.subarray(NONCE_BYTES, body.length - TAG_BYTES)),
      decipher.final(),
    ]).toString("utf8");
  } catch {
    return undefined;
  }
}

/**
 * A relay's path: 192 bits from HMAC-SHA256 keyed by the forwarder code over the relay's random id.
 * Unguessable without the code, stored only as a keyed hash, and computable again while the agent
 * is present: a renewal gives the holder the same delivery.url, so the holder renews (§4.1) instead
 * of opening a new subscription that would need the person's approval again.
 */
export function relayPathFor(code: string, relayId: string): string {
  return createHmac("sha256", code)
    .update(`doorbell/forwarder/relay-path/v1:${relayId}`)
    .digest()
    .subarray(0, 24)
    .toString("base64url");
}
