/**
 * Push profile §8.3: while an agent is connected, the subscription it made in this session is the
 * resource `isto-intents://subscription/<id>`; `resources/subscribe` on it brings
 * `notifications/resources/updated` when something changed (new matches, a status, approval or
 * end). A convenience for a live session, never a replacement for the doorbell: it ends with the
 * session. A session sees only the subscriptions it created or renewed itself, so a
 * subscriptionId alone opens nothing.
 */
import { type McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { SubscribeRequestSchema, UnsubscribeRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { Principal } from "../domain/types.js";
import type { PushService } from "../push/service.js";

export const SUBSCRIPTION_URI_PREFIX = "isto-intents://subscription/";

/** One session's side: what it may read and what it asked to hear about. */
export interface SessionSubscriptions {
  /** The subscriptions this session created or renewed, with the principal that did. */
  readonly own: Map<string, Principal>;
  /** Resource subscriptions (resources/subscribe) of this session, by subscriptionId. */
  readonly watched: Set<string>;
}

export const newSessionSubscriptions = (): SessionSubscriptions => ({ own: new Map(), watched: new Set() });

const notFound = (): Error =>
  new Error("no such subscription in this session: the resource lists the subscriptions this session made");

function idOf(uri: string): string | undefined {
  if (!uri.startsWith(SUBSCRIPTION_URI_PREFIX)) return undefined;
  const id = uri.slice(SUBSCRIPTION_URI_PREFIX.length);
  return /^sub_[A-Za-z0-9]{16,64}$/.test(id) ? id : undefined;
}

/** Registers the resource and the subscribe handlers on a session's server (before `connect`). */
export function registerSubscriptionResource(
  server: McpServer,
  push: PushService,
  session: SessionSubscriptions,
): void {
  server.server.registerCapabilities({ resources: { subscribe: true, listChanged: true } });
  server.registerResource(
    "push-subscription",
    new ResourceTemplate(`${SUBSCRIPTION_URI_PREFIX}{subscriptionId}`, {
      list: async () => ({
        resources: [...session.own.keys()].map((id) => ({
          uri: `${SUBSCRIPTION_URI_PREFIX}${id}`,
          name: id,
          mimeType: "application/json",
        })),
      }),
    }),
    {
      title: "A notification subscription of this session",
      description:
        "The push-subscription (status, approval, lease) of a subscription this session made with intent_subscribe_events. Subscribe to it to hear notifications/resources/updated while connected; read the matches with intent_list_matches.",
      mimeType: "application/json",
    },
    async (uri) => {
      const id = idOf(uri.href);
      const principal = id === undefined ? undefined : session.own.get(id);
      if (id === undefined || principal === undefined) throw notFound();
      const view = await push.view(principal, id);
      return { contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify(view) }] };
    },
  );
  server.server.setRequestHandler(SubscribeRequestSchema, async (request) => {
    const id = idOf(request.params.uri);
    if (id === undefined || !session.own.has(id)) throw notFound();
    session.watched.add(id);
    return {};
  });
  server.server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
    const id = idOf(request.params.uri);
    if (id !== undefined) session.watched.delete(id);
    return {};
  });
}
