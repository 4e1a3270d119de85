/**
 * The holder speaks MCP Events (push profile open question 1): `intent.matches.delivered` and
 * `intent.status.changed`, whose parameter is the intent's code, on one `@doorbell/mcp-events`
 * server attached to every MCP session. Poll reads the match log when asked; push streams and
 * webhook subscriptions are woken by the holder's own change feed (new matches, status changes)
 * for exactly the intents that changed, and check the same log at their interval otherwise.
 */

import {
  createEventsServer,
  type EventDefinition,
  type EventsServer,
  type EventsServerOptions,
  type WebhookOptions,
} from "@doorbell/mcp-events";
import type { Kysely } from "@doorbell/store";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { IntentService } from "../domain/services.js";
import type { HolderTables } from "../schema.js";
import {
  type CodeParams,
  intentOf,
  MATCHES_DELIVERED,
  matchesDelivered,
  STATUS_CHANGED,
  statusChanged,
} from "./definitions.js";
import type { IntentChangeListener } from "./feed.js";

export { createIntentChangeFeed, type IntentChangeFeed, type IntentChangeListener } from "./feed.js";
export { MATCHES_DELIVERED, STATUS_CHANGED };

export interface HolderEventsOptions {
  db: Kysely<HolderTables>;
  intents: IntentService;
  clock?: () => number;
  /** Webhook delivery (the holder's egress policy); without it the types offer poll and push. */
  webhook?: WebhookOptions;
  /** Intervals and limits of the events server (defaults: the SDK's). */
  tuning?: Omit<EventsServerOptions, "webhook" | "clock">;
}

export interface HolderEvents extends IntentChangeListener {
  readonly server: EventsServer;
  /** Puts `events/*` and the capability on one session's server (before it connects). */
  attach(server: McpServer): void;
  close(): Promise<void>;
}

export async function createHolderEvents(options: HolderEventsOptions): Promise<HolderEvents> {
  const clock = options.clock ?? Date.now;
  const server = await createEventsServer({
    ...options.tuning,
    clock,
    ...(options.webhook === undefined ? {} : { webhook: options.webhook }),
  });
  // Live subscriptions per (event type, intent), so a change wakes only that intent's subscribers.
  const byIntent = new Map<string, Set<string>>();
  const intentOfSubscription = new Map<string, string>();
  const keyOf = (name: string, intentId: string) => `${name}\u0000${intentId}`;

  const tracked = (definition: EventDefinition<CodeParams>): EventDefinition<CodeParams> => ({
    ...definition,
    async onSubscribe(_ctx, params, subscriptionId) {
      const key = keyOf(definition.name, await intentOf(options.intents, params));
      intentOfSubscription.set(subscriptionId, key);
      const ids = byIntent.get(key) ?? new Set<string>();
      byIntent.set(key, ids);
      ids.add(subscriptionId);
    },
    onUnsubscribe(_ctx, _params, subscriptionId) {
      const key = intentOfSubscription.get(subscriptionId);
      if (key === undefined) return;
      intentOfSubscription.delete(subscriptionId);
      const ids = byIntent.get(key);
      ids?.delete(subscriptionId);
      if (ids?.size === 0) byIntent.delete(key);
    },
  });
  const deps = { db: options.db, intents: options.intents, clock };
  server.event(tracked(matchesDelivered(deps)));
  server.event(tracked(statusChanged(deps)));

  const wake = (name: string, intentId: string) => {
    for (const subscriptionId of byIntent.get(keyOf(name, intentId)) ?? [])
      server.wake(name, { subscriptionId });
  };
  return {
    server,
    attach: (mcp) => server.attach(mcp),
    matchesRecorded(intentIds) {
      for (const intentId of intentIds) wake(MATCHES_DELIVERED, intentId);
    },
    statusChanged(intentId) {
      wake(STATUS_CHANGED, intentId);
    },
    close: () => server.close(),
  };
}
