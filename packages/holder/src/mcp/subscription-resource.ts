/**
 * Push profile §8.3: a notification subscription as the resource
 * `isto-intents://subscription/<id>`, whose updates (new matches, a status, approval or end) reach a
 * connected client as `notifications/resources/updated`. A convenience while connected, never a
 * replacement for the doorbell.
 *
 * - Modern (2026-07-28): updates go out on `subscriptions/listen` streams that named the URI (the
 *   SDK acknowledges the filter and stamps the subscription id); the endpoint's `notify` is fed by
 *   the push service's change feed. There is no session, so reading the resource needs a principal
 *   that may read the subscription's intent: a signed-in person's token. An update carries nothing
 *   but the URI of an unguessable id, as much as a doorbell says.
 * - Legacy (2025-11-25): a session sees only the subscriptions it created or renewed itself, and
 *   `resources/subscribe` marks one for updates on the session's GET stream.
 *
 * An unknown, malformed or foreign URI is the client's mistake: -32602 with `data.uri` (SEP-2164),
 * on `resources/read`, `resources/subscribe` and `subscriptions/listen` alike.
 */

import type { ModernHandler } from "@doorbell/mcp-endpoint";
import { listenBody } from "@doorbell/mcp-events";
import {
  type McpServer,
  ResourceNotFoundError,
  ResourceTemplate,
  type ServerContext,
} from "@modelcontextprotocol/server";
import type { IntentService } from "../model/services.js";
import { HolderError, type Principal } from "../model/types.js";
import type { PushService } from "../push/service.js";
import { principalFromAuth } from "./principal.js";

export const SUBSCRIPTION_URI_PREFIX = "isto-intents://subscription/";

/** One legacy session's side: what it may read and what it asked to hear about. */
export interface SessionSubscriptions {
  /** The subscriptions this session created or renewed, with the principal that did. */
  readonly own: Map<string, Principal>;
  /** Resource subscriptions (resources/subscribe) of this session, by subscriptionId. */
  readonly watched: Set<string>;
}

export const newSessionSubscriptions = (): SessionSubscriptions => ({ own: new Map(), watched: new Set() });

/**
 * A legacy session remembers at most this many subscriptions (a session's memory
 * is bounded). The oldest is forgotten first: the subscription goes on, only this session can no
 * longer read or watch it as a resource (a convenience, never the delivery).
 */
export const SESSION_SUBSCRIPTIONS_MAX = 100;

/** Records that this session made or renewed `id` (the newest then), within the bound. */
export function rememberSubscription(session: SessionSubscriptions, id: string, principal: Principal): void {
  session.own.delete(id);
  session.own.set(id, principal);
  for (const oldest of session.own.keys()) {
    if (session.own.size <= SESSION_SUBSCRIPTIONS_MAX) break;
    session.own.delete(oldest);
    session.watched.delete(oldest);
  }
}

export const subscriptionUri = (id: string): string => `${SUBSCRIPTION_URI_PREFIX}${id}`;

function idOf(uri: string): string | undefined {
  if (!uri.startsWith(SUBSCRIPTION_URI_PREFIX)) return undefined;
  const id = uri.slice(SUBSCRIPTION_URI_PREFIX.length);
  return /^sub_[A-Za-z0-9]{16,64}$/.test(id) ? id : undefined;
}

const notFound = (uri: string): ResourceNotFoundError =>
  new ResourceNotFoundError(
    uri,
    `no subscription resource ${uri.slice(0, 200)} for this caller: it names a subscription this session made (2025-11-25) or one of the signed-in person's (2026-07-28)`,
  );

/**
 * Registers the resource (before `connect`). `session` is a legacy session's own side; without
 * it (the modern era) the caller's token decides.
 */
export function registerSubscriptionResource(
  server: McpServer,
  push: PushService,
  intents: Pick<IntentService, "readableIntent">,
  session?: SessionSubscriptions,
): void {
  server.server.registerCapabilities({ resources: { subscribe: true, listChanged: false } });

  /**
   * Who reads the subscription: the session that made it (2025-11-25), or a signed-in person who
   * may read the subscription's intent (2026-07-28), reading it as that intent's code would: the
   * push service answers intentCode principals only, and a read carries no code.
   */
  async function principalFor(id: string, ctx: ServerContext): Promise<Principal | undefined> {
    if (session !== undefined) return session.own.get(id);
    const signedIn = principalFromAuth(ctx.http?.authInfo);
    const intentId = signedIn === undefined ? undefined : await push.intentOf(id);
    if (signedIn === undefined || intentId === undefined) return undefined;
    return { kind: "intent-code", intentId: await intents.readableIntent(signedIn, intentId) };
  }

  server.registerResource(
    "push-subscription",
    new ResourceTemplate(`${SUBSCRIPTION_URI_PREFIX}{subscriptionId}`, {
      list: async () => ({
        resources: [...(session?.own.keys() ?? [])].map((id) => ({
          uri: subscriptionUri(id),
          name: id,
          mimeType: "application/json",
        })),
      }),
    }),
    {
      title: "A notification subscription",
      description:
        "The push-subscription (status, approval, lease) of a subscription made with intent_subscribe_events. Listen to it (subscriptions/listen, or resources/subscribe in a 2025 session) to hear notifications/resources/updated while connected; read the matches with intent_list_matches.",
      mimeType: "application/json",
    },
    async (uri, _variables, ctx) => {
      const id = idOf(uri.href);
      if (id === undefined) throw notFound(uri.href);
      try {
        const principal = await principalFor(id, ctx);
        if (principal === undefined) throw notFound(uri.href);
        const view = await push.view(principal, id);
        return { contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify(view) }] };
      } catch (error) {
        if (error instanceof HolderError) throw notFound(uri.href);
        throw error;
      }
    },
  );
  if (session === undefined) return;
  server.server.setRequestHandler("resources/subscribe", async (request) => {
    const id = idOf(request.params.uri);
    if (id === undefined || !session.own.has(id)) throw notFound(request.params.uri);
    session.watched.add(id);
    return {};
  });
  server.server.setRequestHandler("resources/unsubscribe", async (request) => {
    const id = idOf(request.params.uri);
    if (id !== undefined) session.watched.delete(id);
    return {};
  });
}

const LISTEN = "subscriptions/listen";

const notListenable = (uri: string): ResourceNotFoundError =>
  new ResourceNotFoundError(
    uri,
    `no subscription resource ${uri.slice(0, 200)}: subscriptions/listen names a subscription of this holder as ${SUBSCRIPTION_URI_PREFIX}<subscriptionId>, the subscriptionId intent_subscribe_events answered`,
  );

/** What the listen guard asks the push service: whether a subscription with this id exists. */
export type SubscriptionLookup = Pick<PushService, "exists">;

/**
 * §8.3 on `subscriptions/listen`. The SDK's listen router acknowledges every
 * `resourceSubscriptions` URI once the server declares `resources.subscribe`, so a listen naming
 * a resource that does not exist was acknowledged and then heard nothing, while `resources/read`
 * and `resources/subscribe` refuse it. This guard, in front of the modern handler, refuses such a
 * listen the same way (-32602 with `data.uri`, in-band like the SDK's own listen errors) before
 * the SDK sees it: a URI that is no subscription of this holder (another scheme or resource, a
 * malformed id), or an id no subscription has. There is no session in this era: the unguessable
 * id is what a listener holds, as with a doorbell, so a known id is not checked against a caller.
 */
export function guardSubscriptionListen(handler: ModernHandler, lookup: SubscriptionLookup): ModernHandler {
  return {
    async fetch(request, options = {}) {
      const body = await listenBody(request, options);
      const uris = body?.method === LISTEN ? body.params?.notifications?.resourceSubscriptions : undefined;
      // No resources named, or a filter the SDK refuses itself (-32602 for a malformed one).
      if (!Array.isArray(uris)) return handler.fetch(request, options);
      for (const uri of uris) {
        if (typeof uri !== "string") continue;
        const id = idOf(uri);
        const known = id !== undefined && (await lookup.exists(id));
        if (!known) return refusal(body?.id, notListenable(uri));
      }
      return handler.fetch(request, options);
    },
    // It holds nothing open: the handler it wraps is closed by its owner.
    close() {},
  };
}

/** A JSON-RPC error answered in-band (HTTP 200), as the SDK answers a refused listen. */
function refusal(id: unknown, error: ResourceNotFoundError): Response {
  return Response.json(
    { jsonrpc: "2.0", id: id ?? null, error: { code: error.code, message: error.message, data: error.data } },
    { status: 200 },
  );
}
