/**
 * The holder's MCP endpoint: the session endpoint of session-endpoint.ts (session mode, Host/Origin
 * guard, body limit, JSON-RPC errors, bounded idle sessions, rate limits) whose sessions get the
 * holder's intent_* tools and, with the push profile, a per-session subscription resource (§8.3).
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { pino } from "pino";
import type { Principal } from "../domain/types.js";
import { demandInput } from "./schemas.js";
import {
  createSessionEndpoint,
  type McpHandler,
  type McpRequestInfo,
  type SessionEndpointPolicy,
} from "./session-endpoint.js";
import {
  newSessionSubscriptions,
  registerSubscriptionResource,
  SUBSCRIPTION_URI_PREFIX,
} from "./subscription-resource.js";
import { type HolderToolServices, registerHolderTools } from "./tools.js";

export { invalidParams, jsonRpcError } from "./json-rpc.js";
export type { McpHandler, McpRequestInfo };

export interface McpHandlerOptions extends SessionEndpointPolicy {
  /** The holder's public origin (its host and origin are accepted; see origin-guard.ts). */
  publicUrl: string;
  /** Reported in `initialize` (default "doorbell-holder"). */
  name?: string;
  version?: string;
  /** Short instructions for the agent, sent in `initialize`. */
  instructions?: string;
  /**
   * Push profile §8.2: `nextCheckAfter` in intent_list_matches is this far ahead (default and
   * minimum 15 minutes, the profile's floor for polling one intent). Only with the push tools.
   */
  pullIntervalMs?: number;
  /**
   * MCP Events on every session (`intent.matches.delivered`, `intent.status.changed`; see
   * ../events): its `attach` puts `events/*` and the capability on each new session's server.
   * createHolder turns it on.
   */
  events?: { attach(server: McpServer): void };
}

/** Push profile §8.2: an agent should not poll one intent more often than every 15 minutes. */
export const PULL_FLOOR_MS = 15 * 60_000;

const DEFAULT_INSTRUCTIONS =
  "An Isto Intents holder (MCP binding 0.1, consent-link profile). Publish what a person wants to buy with intent_publish_intent, " +
  "give the person the consentUrl to confirm it themselves, keep the intentCode, and poll intent_list_matches with since. " +
  "Results come from a market aggregator and may be incomplete.";

export function createMcpHandler(services: HolderToolServices, options: McpHandlerOptions): McpHandler {
  const clock = options.clock ?? Date.now;
  const log = options.log ?? pino({ level: "silent" });
  const push = services.push;
  const demandSchema = demandInput(services.demand.grid());
  const pullIntervalMs = Math.max(options.pullIntervalMs ?? PULL_FLOOR_MS, PULL_FLOOR_MS);
  const nextCheckAfter = () => new Date(clock() + pullIntervalMs).toISOString();

  const endpoint = createSessionEndpoint({
    ...options,
    clock,
    log,
    name: options.name ?? "doorbell-holder",
    version: options.version ?? "0.1.0",
    instructions: options.instructions ?? DEFAULT_INSTRUCTIONS,
    role: "holder",
    register(server, session) {
      // Push subscriptions this session made, and the ones it watches as resources (§8.3).
      const subscriptions = newSessionSubscriptions();
      registerHolderTools(server, {
        ...session,
        services,
        demandSchema,
        // Issue #8: with a token verifier (OAuth on) the buyer tools also work without an intentCode.
        ...(options.authenticate === undefined ? {} : { signedIn: true }),
        ...(push === undefined
          ? {}
          : {
              nextCheckAfter,
              onSubscribed: (subscriptionId: string, principal: Principal) => {
                subscriptions.own.set(subscriptionId, principal);
              },
            }),
        log,
      });
      if (push !== undefined) registerSubscriptionResource(server, push, subscriptions);
      options.events?.attach(server);
      return subscriptions;
    },
    onClose: () => stopListening?.(),
  });
  // §8.3: tell the sessions that watch a subscription that it changed.
  const stopListening = push?.onChange((ids) => {
    for (const session of endpoint.sessions()) {
      for (const id of ids) {
        if (!session.state.watched.has(id)) continue;
        session.server.server
          .sendResourceUpdated({ uri: `${SUBSCRIPTION_URI_PREFIX}${id}` })
          .catch(() => session.state.watched.delete(id));
      }
    }
  });
  return endpoint;
}
