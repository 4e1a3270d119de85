import type { KeyObject } from "node:crypto";
import { type BodyInput, toBytes } from "../bytes.js";
import { constantTimeEqual } from "../constant-time.js";
import { WebhookError } from "../errors.js";
import { type HeadersLike, readSingleHeader } from "../headers.js";
import {
  type Clock,
  checkTolerance,
  DEFAULT_TOLERANCE_SECONDS,
  parseTimestamp,
  systemClock,
} from "../timestamp.js";
import { MCP_SIGNATURE, MCP_SUBSCRIPTION_ID, MCP_TIMESTAMP, mcpDigest, mcpKeyObject } from "./sign.js";

export interface McpVerifierOptions {
  /** The subscription's `whsec_…` secret(s): the current one and, during a rotation, the previous. */
  secrets: readonly string[];
  toleranceSeconds?: number;
  clock?: Clock;
}

export interface VerifiedMcpWebhook {
  subscriptionId: string;
  timestamp: number;
}

export interface McpVerifier {
  verify(headers: HeadersLike, body: BodyInput): VerifiedMcpWebhook;
}

const SIGNATURE = /^sha256=([0-9a-f]{64})$/;

export function createMcpVerifier(options: McpVerifierOptions): McpVerifier {
  const keys: KeyObject[] = options.secrets.map(mcpKeyObject);
  if (keys.length === 0)
    throw new WebhookError("ERR_WEBHOOK_INVALID_SECRET", "a verifier needs at least one secret");
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const clock = options.clock ?? systemClock;
  return {
    verify(headers, bodyInput) {
      const subscriptionId = readSubscriptionId(headers);
      const timestamp = parseTimestamp(readSingleHeader(headers, MCP_TIMESTAMP), MCP_TIMESTAMP);
      const header = readSingleHeader(headers, MCP_SIGNATURE);
      checkTolerance(timestamp, MCP_TIMESTAMP, clock(), tolerance);
      const match = SIGNATURE.exec(header);
      if (!match) {
        throw new WebhookError(
          "ERR_WEBHOOK_NO_SUPPORTED_SIGNATURE",
          "X-MCP-Signature must be sha256= followed by 64 lowercase hex digits",
        );
      }
      const given = match[1] as string;
      const body = toBytes(bodyInput);
      for (const key of keys)
        if (constantTimeEqual(mcpDigest(key, timestamp, body), given)) return { subscriptionId, timestamp };
      throw new WebhookError(
        "ERR_WEBHOOK_SIGNATURE_MISMATCH",
        "X-MCP-Signature does not match: check the whsec_ secret of this subscription and that the body is byte-for-byte what was sent",
      );
    },
  };
}

/** The sketch requires X-MCP-Subscription-Id on every delivery; receivers pick the secret by it. */
export function readSubscriptionId(headers: HeadersLike): string {
  const id = readSingleHeader(headers, MCP_SUBSCRIPTION_ID);
  if (!/^[\x21-\x7e]{1,256}$/.test(id)) {
    throw new WebhookError(
      "ERR_WEBHOOK_INVALID_ID",
      "X-MCP-Subscription-Id must be 1–256 printable ASCII characters",
    );
  }
  return id;
}
