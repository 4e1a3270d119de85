/**
 * The holder's MCP endpoint: a thin adapter from MCP to the holder's services. The endpoint
 * (@doorbell/mcp-endpoint) serves 2026-07-28 requests statelessly and 2025 clients in sessions; every server it
 * builds gets the intent_* tools, with the push profile the subscription resource (§8.3), and MCP
 * Events when the holder runs them.
 */
import { demandInput, PUSH_TOOL_NAMES, TOOL_NAMES } from "@doorbell/intents";
import {
  createMcpEndpoint,
  type EndpointPolicy,
  type McpEndpoint,
  type ModernHandler,
} from "@doorbell/mcp-endpoint";
import type { McpServer } from "@modelcontextprotocol/server";
import { pino } from "pino";
import type { Principal } from "../model/types.js";
import { signInGate } from "./signin-gate.js";
import {
  guardSubscriptionListen,
  newSessionSubscriptions,
  registerSubscriptionResource,
  rememberSubscription,
  type SessionSubscriptions,
  subscriptionUri,
} from "./subscription-resource.js";
import { type HolderToolServices, holderQuickTools, registerHolderTools } from "./tools.js";

const TOOL_SET: ReadonlySet<string> = new Set([...TOOL_NAMES, ...PUSH_TOOL_NAMES]);

export interface McpHandlerOptions extends EndpointPolicy {
  /** The holder's public origin (its host and origin are accepted; see origin-guard.ts). */
  publicUrl: string;
  /** Reported in `server/discover` and `initialize` (default "doorbell-holder"). */
  name?: string;
  version?: string;
  /** Short instructions for the agent, in `server/discover` and `initialize`. */
  instructions?: string;
  /**
   * Push profile §8.2: `nextCheckAfter` in intent_list_matches is this far ahead (default and
   * minimum 15 minutes, the profile's floor for polling one intent). Only with the push tools.
   */
  pullIntervalMs?: number;
  /**
   * MCP Events: puts `events/*` and the capability on each server the endpoint builds (a legacy
   * session's also sends `notifications/events/list_changed`), and wraps the modern handler so
   * `subscriptions/listen` honours `eventsListChanged`.
   */
  events?: {
    attach(server: McpServer, options?: { session?: boolean }): void;
    listen?(handler: ModernHandler): ModernHandler;
  };
  /**
   * OAuth: where the protected resource metadata is. With it, a call that needs a signed-in
   * person and carries no token is answered with the 401 challenge (signin-gate.ts).
   */
  resourceMetadataUrl?: string;
  /**
   * Answer a plain 2026-07-28 `intent_list_matches` call on the Node request, beside the SDK and
   * with its bytes (@doorbell/mcp-endpoint's quick call). Default true; false sends every call
   * through the SDK.
   */
  quick?: boolean;
}

/** Push profile §8.2: an agent should not poll one intent more often than every 15 minutes. */
export const PULL_FLOOR_MS = 15 * 60_000;

const DEFAULT_INSTRUCTIONS =
  "An Isto Intents holder (MCP binding 0.1, consent-link profile). Publish what a person wants to buy with intent_publish_intent, " +
  "give the person the consentUrl to confirm it themselves, keep the intentCode, and poll intent_list_matches with since. " +
  "Results come from a market aggregator and may be incomplete.";

export type HolderMcpEndpoint = McpEndpoint<SessionSubscriptions | undefined>;

export function createMcpHandler(
  services: HolderToolServices,
  options: McpHandlerOptions,
): HolderMcpEndpoint {
  const clock = options.clock ?? Date.now;
  const log = options.log ?? pino({ level: "silent" });
  const push = services.push;
  const demandSchema = demandInput(services.demand.grid());
  const pullIntervalMs = Math.max(options.pullIntervalMs ?? PULL_FLOOR_MS, PULL_FLOOR_MS);
  const nextCheckAfter = () => new Date(clock() + pullIntervalMs).toISOString();

  const quick =
    options.quick === false
      ? undefined
      : holderQuickTools({
          services,
          demandSchema,
          ...(options.authenticate === undefined ? {} : { signedIn: true }),
          ...(push === undefined ? {} : { nextCheckAfter }),
          log,
        });
  const endpoint = createMcpEndpoint<SessionSubscriptions | undefined>({
    ...options,
    ...(quick === undefined ? {} : { quickTools: quick }),
    clock,
    log,
    name: options.name ?? "doorbell-holder",
    version: options.version ?? "0.1.0",
    instructions: options.instructions ?? DEFAULT_INSTRUCTIONS,
    role: "holder",
    ...(options.events?.listen === undefined && push === undefined
      ? {}
      : {
          // §8.3: a listen naming a subscription resource that does not exist is refused, as
          // resources/read refuses it; the events wrapper goes outside, so it sees that refusal.
          wrapModern: (handler: ModernHandler) => {
            const guarded = push === undefined ? handler : guardSubscriptionListen(handler, push);
            return options.events?.listen?.(guarded) ?? guarded;
          },
        }),
    ...(options.resourceMetadataUrl === undefined ? {} : { gate: signInGate(options.resourceMetadataUrl) }),
    register(server, scope) {
      // A legacy session keeps the subscriptions it made (what its resource shows); modern has none.
      const legacy = scope.era === "legacy";
      const session = legacy ? newSessionSubscriptions() : undefined;
      // A modern tools/call of a known tool needs that tool alone; resources and events only
      // their own methods (and discover, listen: the whole surface for capabilities).
      const method = scope.focus?.method;
      const only =
        method === "tools/call" && TOOL_SET.has(scope.focus?.name ?? "") ? scope.focus?.name : undefined;
      const whole = method === undefined || method === "server/discover" || method === "subscriptions/listen";
      registerHolderTools(server, {
        services,
        demandSchema,
        ...(scope.limit === undefined ? {} : { limit: scope.limit }),
        ...(scope.observe === undefined ? {} : { observe: scope.observe }),
        ...(only === undefined ? {} : { only }),
        // With a token verifier (OAuth on) the buyer tools also work without an intentCode.
        ...(options.authenticate === undefined ? {} : { signedIn: true }),
        ...(push === undefined
          ? {}
          : {
              nextCheckAfter,
              ...(session === undefined
                ? {}
                : {
                    onSubscribed: (subscriptionId: string, principal: Principal) => {
                      rememberSubscription(session, subscriptionId, principal);
                    },
                  }),
            }),
        log,
      });
      if (push !== undefined && (whole || method?.startsWith("resources/")))
        registerSubscriptionResource(server, push, services.intents, session);
      if (whole || method?.startsWith("events/"))
        options.events?.attach(server, legacy ? { session: true } : undefined);
      return session;
    },
    onClose: () => stopListening?.(),
  });
  // §8.3: tell the listeners of a subscription that it changed — modern streams through the SDK's
  // listen router, legacy sessions that subscribed to the resource on their GET stream.
  const stopListening = push?.onChange((ids) => {
    for (const id of ids) endpoint.notify.resourceUpdated(subscriptionUri(id));
    for (const session of endpoint.sessions()) {
      for (const id of ids) {
        if (session.state?.watched.has(id) !== true) continue;
        session.server.server
          .sendResourceUpdated({ uri: subscriptionUri(id) })
          .catch(() => session.state?.watched.delete(id));
      }
    }
  });
  return endpoint;
}
