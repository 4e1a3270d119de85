/**
 * The holder's MCP endpoint as createHolder wires it: the tools over the services, MCP Events,
 * tool calls on /metrics, limits shared across processes, and OAuth per request.
 */

import type { SharedMcpLimit } from "@doorbell/mcp-endpoint";
import type { Logger } from "pino";
import type { HolderEvents } from "../events/index.js";
import { type HolderLimits, operatorHintText } from "../limits/index.js";
import { createMcpHandler, type HolderMcpEndpoint, type McpHandlerOptions } from "../mcp/handler.js";
import type { HolderOAuth } from "../oauth/index.js";
import type { HolderMetrics } from "../observability/metrics.js";
import type { HolderServices } from "./services.js";

export function createHolderMcp(
  services: HolderServices,
  wiring: {
    mcp?: Omit<McpHandlerOptions, "publicUrl" | "clock" | "log">;
    publicUrl: string;
    clock: () => number;
    log: Logger;
    metrics: HolderMetrics;
    limits: HolderLimits;
    events?: HolderEvents;
    oauth?: HolderOAuth;
  },
): HolderMcpEndpoint {
  const { oauth, events } = wiring;
  return createMcpHandler(
    {
      intents: services.intents,
      matches: services.matching,
      offers: services.offers,
      demand: services.demand,
      ...(services.push === undefined ? {} : { push: services.push }),
    },
    {
      ...wiring.mcp,
      publicUrl: wiring.publicUrl,
      clock: wiring.clock,
      log: wiring.log,
      ...(events === undefined ? {} : { events }),
      // MCP calls by tool, outcome and latency on /metrics.
      observeToolCall: wiring.metrics.observeToolCall,
      // New sessions and tool calls per client, counted across processes (unless a
      // caller turned the MCP limits off).
      ...(wiring.mcp?.toolRateLimit === false ? {} : { sharedLimit: namedSharedLimit(wiring.limits) }),
      // The verified bearer token's AuthInfo (oauth/resource.ts), and the 401 challenge
      // for a call that needs a signed-in person.
      ...(oauth === undefined
        ? {}
        : { authenticate: oauth.resource.authenticate, resourceMetadataUrl: oauth.resource.metadataUrl }),
    },
  );
}

/** The shared MCP limits, whose refusals name the limit and the `--limit` that changes it. */
function namedSharedLimit(limits: HolderLimits): SharedMcpLimit {
  return async (bucket, key) => {
    const verdict = await limits.consume(bucket, key);
    if (verdict.ok) return verdict;
    return { ...verdict, limit: { name: bucket, hint: operatorHintText(limits.hint(bucket)) } };
  };
}
