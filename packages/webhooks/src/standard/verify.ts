import { verify as ed25519Verify, type KeyObject } from "node:crypto";
import { type BodyInput, decodeBase64Strict, toBytes } from "../bytes.js";
import { constantTimeEqual } from "../constant-time.js";
import { WebhookError } from "../errors.js";
import { type HeadersLike, readSingleHeader } from "../headers.js";
import { decodeSecret, publicKeyObject } from "../secret.js";
import {
  type Clock,
  checkTolerance,
  DEFAULT_TOLERANCE_SECONDS,
  parseTimestamp,
  systemClock,
} from "../timestamp.js";
import { WEBHOOK_ID, WEBHOOK_ID_PATTERN, WEBHOOK_SIGNATURE, WEBHOOK_TIMESTAMP } from "./headers.js";
import { type HmacKey, hmacKey, hmacSha256Base64 } from "./hmac.js";

export interface StandardVerifierOptions {
  /** `whsec_` secrets to accept (current and, during a rotation, previous). */
  secrets?: readonly string[];
  /** `whpk_` Ed25519 public keys to accept `v1a` signatures from. */
  publicKeys?: readonly string[];
  /** Allowed clock difference in both directions; 300 s by default (push profile §6 rule 4). */
  toleranceSeconds?: number;
  clock?: Clock;
}

export interface VerifiedStandardWebhook {
  id: string;
  timestamp: number;
  /** Which kind of signature verified. */
  version: "v1" | "v1a";
}

export interface StandardVerifier {
  /** Throws a `WebhookError` saying exactly what failed; returns the verified id and timestamp. */
  verify(headers: HeadersLike, body: BodyInput): VerifiedStandardWebhook;
}

// base64 of a 32-byte HMAC-SHA256, with its one "=" of padding.
const HMAC_BASE64_LENGTH = 44;
const ED25519_BYTES = 64;

export function createStandardVerifier(options: StandardVerifierOptions): StandardVerifier {
  const hmacKeys = (options.secrets ?? []).map((secret) => hmacKey(decodeSecret(secret)));
  const edKeys = (options.publicKeys ?? []).map(publicKeyObject);
  if (hmacKeys.length + edKeys.length === 0) {
    throw new WebhookError(
      "ERR_WEBHOOK_INVALID_SECRET",
      "a verifier needs at least one whsec_ secret or whpk_ key",
    );
  }
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const clock = options.clock ?? systemClock;

  return {
    verify(headers, bodyInput) {
      const id = readSingleHeader(headers, WEBHOOK_ID);
      if (!WEBHOOK_ID_PATTERN.test(id)) {
        throw new WebhookError(
          "ERR_WEBHOOK_INVALID_ID",
          "the webhook-id header must be 1–256 printable ASCII characters",
        );
      }
      const timestamp = parseTimestamp(readSingleHeader(headers, WEBHOOK_TIMESTAMP), WEBHOOK_TIMESTAMP);
      const signatures = readSingleHeader(headers, WEBHOOK_SIGNATURE);
      checkTolerance(timestamp, WEBHOOK_TIMESTAMP, clock(), tolerance);
      const body = toBytes(bodyInput);
      const prefix = `${id}.${timestamp}.`;
      const version = matchSignature(signatures, prefix, body, hmacKeys, edKeys);
      return { id, timestamp, version };
    },
  };
}

/**
 * Tries every signature in the header against every key; unknown versions are ignored as the
 * spec requires. Expected HMACs are computed lazily and once per key.
 */
function matchSignature(
  header: string,
  prefix: string,
  body: Uint8Array,
  hmacKeys: readonly HmacKey[],
  edKeys: readonly KeyObject[],
): "v1" | "v1a" {
  // The reasons are kept only for a refusal: a header whose first signature matches makes no list.
  let details: string[] | undefined;
  let expected: string[] | undefined;
  let edContent: Buffer | undefined;
  let supported = 0;
  // Scanned by offsets rather than split() and slice(): one v1 signature is the common case and
  // its version and value are read in place, without allocating.
  let index = 0;
  for (let start = 0; start <= header.length; index++) {
    let end = header.indexOf(" ", start);
    if (end < 0) end = header.length;
    const tokenStart = start;
    start = end + 1;
    if (end === tokenStart) continue;
    const comma = header.indexOf(",", tokenStart);
    const versionEnd = comma < 0 || comma > end ? end : comma;
    const version = versionOf(header, tokenStart, versionEnd);
    if (version === "v1" && hmacKeys.length > 0) {
      supported++;
      const length = end - versionEnd - 1;
      if (length !== HMAC_BASE64_LENGTH) {
        details = noted(
          details,
          `${label(index, version)}: not a base64 HMAC-SHA256 (${HMAC_BASE64_LENGTH} characters)`,
        );
        continue;
      }
      expected ??= hmacSignatures(hmacKeys, prefix, body);
      for (const candidate of expected)
        if (constantTimeEqual(candidate, header, versionEnd + 1, length)) return "v1";
      details = noted(
        details,
        `${label(index, version)}: does not match any of the ${hmacKeys.length} secret(s)`,
      );
    } else if (version === "v1a" && edKeys.length > 0) {
      supported++;
      const given = versionEnd < end ? decodeBase64Strict(header.slice(versionEnd + 1, end)) : undefined;
      if (!given || given.length !== ED25519_BYTES) {
        details = noted(
          details,
          `${label(index, version)}: not a base64 Ed25519 signature of ${ED25519_BYTES} bytes`,
        );
        continue;
      }
      edContent ??= Buffer.concat([Buffer.from(prefix, "utf8"), body]);
      for (const key of edKeys) if (ed25519Verify(null, edContent, key, given)) return "v1a";
      details = noted(
        details,
        `${label(index, version)}: does not verify under any of the ${edKeys.length} public key(s)`,
      );
    } else {
      const other = version ?? header.slice(tokenStart, versionEnd);
      details = noted(details, `${label(index, other)}: ignored (not a version this verifier has keys for)`);
    }
  }
  if (supported === 0) {
    throw new WebhookError(
      "ERR_WEBHOOK_NO_SUPPORTED_SIGNATURE",
      `the webhook-signature header has no ${acceptedVersions(hmacKeys, edKeys)} signature`,
      details ?? [],
    );
  }
  throw new WebhookError(
    "ERR_WEBHOOK_SIGNATURE_MISMATCH",
    "no signature matched: check the secret belongs to this endpoint and the body is byte-for-byte what was sent",
    details ?? [],
  );
}

const CHAR_V = 0x76;
const CHAR_1 = 0x31;
const CHAR_A = 0x61;

/** The token's version when it is one this verifier knows, read by its characters (no slice). */
function versionOf(header: string, start: number, end: number): "v1" | "v1a" | undefined {
  if (end - start < 2 || end - start > 3) return undefined;
  if (header.charCodeAt(start) !== CHAR_V || header.charCodeAt(start + 1) !== CHAR_1) return undefined;
  if (end - start === 2) return "v1";
  return header.charCodeAt(start + 2) === CHAR_A ? "v1a" : undefined;
}

/** The expected v1 signature under each secret. */
function hmacSignatures(hmacKeys: readonly HmacKey[], prefix: string, body: Uint8Array): string[] {
  const signatures: string[] = [];
  for (const key of hmacKeys) signatures.push(hmacSha256Base64(key, prefix, body));
  return signatures;
}

function noted(details: string[] | undefined, line: string): string[] {
  if (details === undefined) return [line];
  details.push(line);
  return details;
}

function label(index: number, version: string): string {
  return `signature ${index + 1} (${version || "no version"})`;
}

function acceptedVersions(hmacKeys: readonly HmacKey[], edKeys: readonly KeyObject[]): string {
  const versions = [hmacKeys.length > 0 ? "v1" : "", edKeys.length > 0 ? "v1a" : ""].filter(Boolean);
  return versions.join(" or ");
}
