/**
 * The holder speaks MCP Events (push profile open question 1): `intent.matches.delivered` and
 * `intent.status.changed`, whose parameter is the intent's code, on one `@doorbell/mcp-events`
 * server attached to every MCP session. Poll reads the match log when asked; push streams and
 * webhook subscriptions are woken by the change bus (cluster/change-bus.ts: new matches and status
 * changes of any process) for exactly the intents that changed, and check the same log at their
 * interval otherwise. Webhook subscriptions and their outbox live in the holder's database.
 */

import {
  type AttachOptions,
  type AttachTarget,
  type CallContext,
  createEventsServer,
  type EventDefinition,
  type EventsListenHandler,
  type EventsServer,
  type EventsServerOptions,
  type McpFetchHandler,
  type WebhookOptions,
  withEventsListen,
} from "@doorbell/mcp-events";
import type { Kysely } from "@doorbell/store";
import type { IntentService } from "../model/services.js";
import type { HolderTables } from "../model/tables.js";
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

/** The poll interval the holder recommends (the SDK's default is 30 s). */
export const HOLDER_NEXT_POLL_MS = 5_000;

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
  /**
   * Puts `events/*` and the capability (top-level `events` and the extension) on a server before
   * it connects: SDK 2.x `McpServer`/`Server` in `createMcpHandler`'s per-request factory (cheap:
   * the handlers are built once), `{ session: true }` for a sessionful 2025-11-25 server, or an
   * SDK 1.x server.
   */
  attach(server: AttachTarget, options?: AttachOptions): void;
  /**
   * Wraps the `createMcpHandler` handler so `subscriptions/listen` honours `eventsListChanged`
   * (the SDK's own listen router knows only the core change types). Serve /mcp with its `fetch`.
   */
  listen(handler: McpFetchHandler): EventsListenHandler;
  /** Notifications may have been missed: every subscription checks now. */
  resync(): void;
  close(): Promise<void>;
}

/**
 * Who may hold a webhook subscription: an OAuth token's subject. An agent with only an
 * intentCode has no principal, so it polls or streams (its code authorizes each call) and a
 * webhook subscription is Forbidden; its webhooks are the push profile's
 * `intent_subscribe_events` (docs/decisions.md).
 */
export function holderPrincipal(call: CallContext): string | undefined {
  const subject = call.authInfo?.extra?.subject;
  return typeof subject === "string" && subject !== "" ? subject : undefined;
}

export async function createHolderEvents(options: HolderEventsOptions): Promise<HolderEvents> {
  const clock = options.clock ?? Date.now;
  const server = await createEventsServer({
    principal: holderPrincipal,
    // Push and webhooks hear of a change within milliseconds; a poller cannot be told, so it is
    // asked back soon: one indexed read of its intent's matches per poll.
    nextPollMs: HOLDER_NEXT_POLL_MS,
    ...options.tuning,
    clock,
    ...(options.webhook === undefined ? {} : { webhook: options.webhook }),
  });
  // A change is addressed to its intent: the code's intent is each subscription's topic, so a
  // change wakes only that intent's subscriptions, stored webhook ones of every process included.
  const byIntent = (definition: EventDefinition<CodeParams>): EventDefinition<CodeParams> => ({
    ...definition,
    topic: (_ctx, params) => intentOf(options.intents, params),
  });
  const deps = { db: options.db, intents: options.intents, clock };
  server.event(byIntent(matchesDelivered(deps)));
  server.event(byIntent(statusChanged(deps)));

  return {
    server,
    attach: (mcp, attachOptions) => server.attach(mcp, attachOptions),
    listen: (handler) => withEventsListen(handler, server),
    matchesRecorded(intentIds) {
      if (intentIds.length > 0) server.wake(MATCHES_DELIVERED, { topic: intentIds });
    },
    statusChanged(intentId) {
      server.wake(STATUS_CHANGED, { topic: intentId });
    },
    resync() {
      server.wake(MATCHES_DELIVERED);
      server.wake(STATUS_CHANGED);
    },
    close: () => server.close(),
  };
}
