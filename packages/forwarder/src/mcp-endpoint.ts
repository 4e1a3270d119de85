/**
 * The forwarder's MCP endpoint: the holder's endpoint (@doorbell/mcp-endpoint `createMcpEndpoint`: 2026-07-28 requests served
 * statelessly, 2025 clients in bounded sessions, Host/Origin check, body limit, JSON-RPC errors for
 * malformed requests, per-client rate limits) whose servers get the forwarder's tools (tools.ts).
 */
import { createMcpEndpoint, type EndpointPolicy, type McpHandler } from "@doorbell/mcp-endpoint";
import type { ForwarderContext } from "./context.js";
import type { PushSide } from "./subscriptions.js";
import { registerForwarderTools } from "./tools.js";

export type ForwarderMcpOptions = Pick<
  EndpointPolicy,
  "allowedHosts" | "allowedOrigins" | "toolRateLimit" | "maxSessions" | "sessionIdleMs" | "maxBodyBytes"
>;

export type ForwarderMcp = McpHandler;

const INSTRUCTIONS =
  "An Isto Intents forwarder (MCP binding 0.1, consent-link and push profiles): every call goes to the intent holder behind it. " +
  "Publish with intent_publish_intent, give the person the consentUrl, keep the intentCode (fc_…), read matches with intent_list_matches " +
  "and, if you have an HTTPS endpoint, subscribe to doorbells with intent_subscribe_events.";

export function createForwarderMcp(
  ctx: ForwarderContext,
  push: PushSide,
  options: ForwarderMcpOptions = {},
): ForwarderMcp {
  return createMcpEndpoint({
    ...options,
    publicUrl: ctx.publicUrl,
    // One client address may open sessions as it needs; tool calls are still limited.
    sessionRateLimit: false,
    log: ctx.log,
    name: "doorbell-forwarder",
    version: "0.1.0",
    instructions: INSTRUCTIONS,
    role: "forwarder",
    failedEvent: "forwarder.mcp_failed",
    register: (server, scope) =>
      registerForwarderTools(server, {
        ctx,
        push,
        ...(scope.limit === undefined ? {} : { limit: scope.limit }),
      }),
  });
}
