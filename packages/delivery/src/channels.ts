import { createHash } from "node:crypto";
import { createMcpSigner, createStandardSigner, MCP_SUBSCRIPTION_ID } from "@doorbell/webhooks";
import type { Channel } from "./schema.js";

/**
 * The MCP Events channels (both wires): eventId bodies, each event retried on its own, 410 and
 * 413 drop one event, sustained failures suspend delivery until the client refreshes (their
 * `ChannelPolicy`, policy.ts). The push profile keeps a queue, retries a 413 like any other answer
 * that is not 2xx, and ends on 410.
 */
export function followsMcpRules(channel: Channel): channel is "mcp" | "mcp-standard" {
  return channel === "mcp" || channel === "mcp-standard";
}

/** The push profile's envelope (§5.1): the Standard Webhooks type/timestamp/data shape plus specVersion. */
export function pushEnvelope(type: string, timestamp: string, data: Record<string, unknown>): string {
  return JSON.stringify({ specVersion: "0.4", type, timestamp, data });
}

/** One MCP Events delivery: an event, or a control envelope (`error`, or SEP-3415's `gap`). */
export interface McpDelivery {
  eventId: string;
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
  cursor?: string;
  error?: { code: number; message: string; data?: Record<string, unknown> };
  gap?: { cursor: string | null };
}

/**
 * The MCP Events sketch's delivery body ("Webhook Event Delivery"), or, when the event carries an
 * `error`, its signed error envelope `{id, error}` (cursor expiry, revoked authorization).
 */
export function mcpEnvelope(subscriberId: string, event: McpDelivery): string {
  if (event.error !== undefined) return JSON.stringify({ id: subscriberId, error: event.error });
  return JSON.stringify({
    id: subscriberId,
    eventId: event.eventId,
    name: event.type,
    timestamp: event.timestamp,
    data: event.data,
    ...(event.cursor === undefined ? {} : { cursor: event.cursor }),
  });
}

/**
 * SEP-3415's delivery body: the bare EventOccurrence (the subscription id travels in
 * `X-MCP-Subscription-Id`), or a control envelope `{type: "terminated", error}` / `{type: "gap", cursor}`.
 */
export function mcpStandardEnvelope(event: McpDelivery): string {
  if (event.error !== undefined) return JSON.stringify({ type: "terminated", error: event.error });
  if (event.gap !== undefined) return JSON.stringify({ type: "gap", cursor: event.gap.cursor });
  return JSON.stringify({
    eventId: event.eventId,
    name: event.type,
    timestamp: event.timestamp,
    data: event.data,
    ...(event.cursor === undefined ? {} : { cursor: event.cursor }),
  });
}

const CURSOR_KEY = ',"cursor":';

/**
 * An MCP event body without its `cursor`, for an event sent while an older one of its subscription
 * is still pending: the payload cursor is a safe-to-persist watermark (MCP Events sketch, "Webhook
 * Event Delivery": cursor_N is not sent until every event before N was acknowledged or given up
 * on); absent is null on the SEP-3415 wire. Both envelopes put `cursor` last, so it is cut off the
 * end and the rest stays byte for byte. A control body is returned as it is: a `gap` carries its
 * cursor on purpose, `error` and `terminated` carry none.
 */
export function withoutCursor(body: string): string {
  if (body.startsWith('{"type":') || !body.endsWith('"}')) return body;
  // A JSON string cannot hold an unescaped quote, so the last `,"cursor":` is the top-level key.
  const at = body.lastIndexOf(CURSOR_KEY);
  if (at < 0) return body;
  try {
    if (typeof JSON.parse(body.slice(at + CURSOR_KEY.length, -1)) !== "string") return body;
  } catch {
    return body;
  }
  return `${body.slice(0, at)}}`;
}

/** The endpoint challenge of each channel, signed like a delivery. */
export function verificationBody(
  channel: Channel,
  subscriberId: string,
  challenge: string,
  timestamp: string,
): string {
  switch (channel) {
    case "push":
      return pushEnvelope("subscription.verification", timestamp, {
        subscriptionId: subscriberId,
        challenge,
      });
    case "mcp":
      return JSON.stringify({ type: "verification", id: subscriberId, challenge });
    case "mcp-standard":
      return JSON.stringify({ type: "verification", challenge });
    case "operator":
      // The operator configured the endpoint themselves: it is never challenged.
      return JSON.stringify({ type: "verification", challenge });
  }
}

// Standard Webhooks ids are printable ASCII without spaces, and never contain "." (id.timestamp.body).
const STANDARD_ID = /^[\x21-\x2d\x2f-\x7e]{1,256}$/;

/**
 * The `webhook-id` of an MCP event on the Standard Webhooks wire: the eventId itself (SEP-3415), or,
 * for an eventId a Standard Webhooks id cannot carry (a dot, e.g. an upstream `topic.partition.offset`),
 * a stable digest of it, so every retry and every path of the same event still shares one id.
 */
export function standardWebhookId(eventId: string): string {
  if (STANDARD_ID.test(eventId)) return eventId;
  return `evt_${createHash("sha256").update(eventId, "utf8").digest("base64url").slice(0, 32)}`;
}

export interface SigningInput {
  channel: Channel;
  subscriberId: string;
  webhookId: string;
  /** Newest first: during a rotation both are signed (Standard Webhooks) — the sketch carries one. */
  secrets: readonly string[];
  timestampSeconds: number;
  body: Uint8Array;
}

/** Signs attempts for one subscription with its secrets loaded once (each load builds a KeyObject). */
export type AttemptSigner = (
  webhookId: string,
  timestampSeconds: number,
  body: Uint8Array,
) => Record<string, string>;

/** A signer for many attempts of one subscription: the secrets are decoded and loaded once. */
export function attemptSigner(
  channel: Channel,
  subscriberId: string,
  secrets: readonly string[],
): AttemptSigner {
  if (channel === "mcp") {
    const signer = createMcpSigner(secrets[0] as string);
    return (_webhookId, timestamp, body) => signer.headers({ subscriptionId: subscriberId, timestamp, body });
  }
  const signer = createStandardSigner({ secrets });
  return (id, timestamp, body) => {
    const headers: Record<string, string> = signer.headers({ id, timestamp, body });
    if (channel === "mcp-standard") headers[MCP_SUBSCRIPTION_ID] = subscriberId;
    return headers;
  };
}

/** The headers that sign one attempt; the timestamp is new on every attempt, the id is not. */
export function signAttempt(input: SigningInput): Record<string, string> {
  return attemptSigner(input.channel, input.subscriberId, input.secrets)(
    input.webhookId,
    input.timestampSeconds,
    input.body,
  );
}
