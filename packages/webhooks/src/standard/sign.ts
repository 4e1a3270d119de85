import { sign as ed25519Sign } from "node:crypto";
import { type BodyInput, toBytes } from "../bytes.js";
import { WebhookError } from "../errors.js";
import { decodeSecret, signingKeyObject } from "../secret.js";
import { type StandardHeaders, WEBHOOK_ID_PATTERN } from "./headers.js";
import { hmacKey, hmacSha256Base64 } from "./hmac.js";

export interface StandardMessage {
  /** The webhook-id: unique per message, reused by every retry of it. */
  id: string;
  /** Whole Unix seconds. */
  timestamp: number;
  /** The exact bytes that will be sent. */
  body: BodyInput;
}

export interface StandardSignerOptions {
  /** `whsec_` secrets; more than one during a rotation, each giving its own `v1` signature. */
  secrets?: readonly string[];
  /** `whsk_` Ed25519 keys, each giving a `v1a` signature. */
  signingKeys?: readonly string[];
}

export interface StandardSigner {
  /** The `webhook-signature` value: space-separated `v1,…` then `v1a,…` signatures. */
  sign(message: StandardMessage): string;
  /** The three Standard Webhooks headers for a message. */
  headers(message: StandardMessage): StandardHeaders;
}

/** Builds a signer with its keys loaded once; signs `id.timestamp.body` over the exact body bytes. */
export function createStandardSigner(options: StandardSignerOptions): StandardSigner {
  const hmacKeys = (options.secrets ?? []).map((secret) => hmacKey(decodeSecret(secret)));
  const edKeys = (options.signingKeys ?? []).map(signingKeyObject);
  if (hmacKeys.length + edKeys.length === 0) {
    throw new WebhookError(
      "ERR_WEBHOOK_INVALID_SECRET",
      "a signer needs at least one whsec_ secret or whsk_ key",
    );
  }
  const sign = (message: StandardMessage): string => {
    const prefix = signedPrefix(message.id, message.timestamp);
    const body = toBytes(message.body);
    const parts = hmacKeys.map((key) => `v1,${hmacSha256Base64(key, prefix, body)}`);
    if (edKeys.length > 0) {
      const content = Buffer.concat([Buffer.from(prefix, "utf8"), body]);
      for (const key of edKeys) parts.push(`v1a,${ed25519Sign(null, content, key).toString("base64")}`);
    }
    return parts.join(" ");
  };
  return {
    sign,
    headers: (message) => ({
      "webhook-id": message.id,
      "webhook-timestamp": String(message.timestamp),
      "webhook-signature": sign(message),
    }),
  };
}

/** `id.timestamp.` — the part of the signed content before the body. */
export function signedPrefix(id: string, timestamp: number): string {
  if (!WEBHOOK_ID_PATTERN.test(id) || id.includes(".")) {
    // The spec asks that ids never contain "." so `id.timestamp.body` cannot be split two ways.
    throw new WebhookError(
      "ERR_WEBHOOK_INVALID_ID",
      "a webhook-id is 1–256 printable ASCII characters without spaces or dots",
    );
  }
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw new WebhookError(
      "ERR_WEBHOOK_INVALID_TIMESTAMP",
      "a webhook-timestamp is whole, non-negative Unix seconds",
    );
  }
  return `${id}.${timestamp}.`;
}
