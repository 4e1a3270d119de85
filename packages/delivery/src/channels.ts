import { createMcpSigner, createStandardSigner } from "@doorbell/webhooks";
import type { Channel } from "./schema.js";

/** The push profile's envelope (§5.1): the Standard Webhooks type/timestamp/data shape plus specVersion. */
export function pushEnvelope(type: string, timestamp: string, data: Record<string, unknown>): string {
  return JSON.stringify({ specVersion: "0.4", type, timestamp, data });
}

/** The MCP Events sketch's delivery body ("Webhook Event Delivery"). */
export function mcpEnvelope(
  subscriberId: string,
  event: { eventId: string; type: string; timestamp: string; data: Record<string, unknown>; cursor?: string },
): string {
  return JSON.stringify({
    id: subscriberId,
    eventId: event.eventId,
    name: event.type,
    timestamp: event.timestamp,
    data: event.data,
    ...(event.cursor === undefined ? {} : { cursor: event.cursor }),
  });
}

export interface SigningInput {
  channel: Channel;
  subscriberId: string;
  webhookId: string;
  /** Newest first: during a rotation both are signed (push) — MCP carries one signature. */
  secrets: readonly string[];
  timestampSeconds: number;
  body: Uint8Array;
}

/** The headers that sign one attempt; the timestamp is new on every attempt, the id is not. */
export function signAttempt(input: SigningInput): Record<string, string> {
  if (input.channel === "mcp") {
    return createMcpSigner(input.secrets[0] as string).headers({
      subscriptionId: input.subscriberId,
      timestamp: input.timestampSeconds,
      body: input.body,
    });
  }
  return createStandardSigner({ secrets: input.secrets }).headers({
    id: input.webhookId,
    timestamp: input.timestampSeconds,
    body: input.body,
  });
}
