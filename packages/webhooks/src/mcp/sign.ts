import { createHmac, createSecretKey, type KeyObject } from "node:crypto";
import { type BodyInput, toBytes } from "../bytes.js";
import { WebhookError } from "../errors.js";
import { decodeSecret } from "../secret.js";

/** Header names of the MCP Events sketch ("Replay attack prevention", "Delivery profile"). */
export const MCP_SIGNATURE = "x-mcp-signature";
export const MCP_TIMESTAMP = "x-mcp-timestamp";
export const MCP_SUBSCRIPTION_ID = "x-mcp-subscription-id";

// A type alias (not an interface) so it is assignable to HeadersInit and plain records.
export type McpHeaders = {
  "x-mcp-signature": string;
  "x-mcp-timestamp": string;
  "x-mcp-subscription-id": string;
};

export interface McpMessage {
  subscriptionId: string;
  /** Whole Unix seconds; regenerated on every retry. */
  timestamp: number;
  body: BodyInput;
}

/**
 * The sketch keys the HMAC with the literal `whsec_…` string as UTF-8 bytes, not with the
 * decoded secret as Standard Webhooks does. The secret is still checked to be a valid one.
 */
export function mcpKeyObject(secret: string): KeyObject {
  decodeSecret(secret);
  if (!secret.startsWith("whsec_")) {
    throw new WebhookError("ERR_WEBHOOK_INVALID_SECRET", "an MCP Events secret is the full whsec_… string");
  }
  return createSecretKey(Buffer.from(secret, "utf8"));
}

/** Lowercase hex HMAC-SHA256 of `timestamp.body`. */
export function mcpDigest(key: KeyObject, timestamp: number, body: Uint8Array): string {
  return createHmac("sha256", key).update(`${timestamp}.`, "utf8").update(body).digest("hex");
}

export interface McpSigner {
  headers(message: McpMessage): McpHeaders;
}

export function createMcpSigner(secret: string): McpSigner {
  const key = mcpKeyObject(secret);
  return {
    headers({ subscriptionId, timestamp, body }) {
      if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
        throw new WebhookError(
          "ERR_WEBHOOK_INVALID_TIMESTAMP",
          "X-MCP-Timestamp is whole, non-negative Unix seconds",
        );
      }
      return {
        "x-mcp-signature": `sha256=${mcpDigest(key, timestamp, toBytes(body))}`,
        "x-mcp-timestamp": String(timestamp),
        "x-mcp-subscription-id": subscriptionId,
      };
    },
  };
}
