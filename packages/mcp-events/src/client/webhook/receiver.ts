/**
 * The webhook endpoint of an events client: one path per subscription (`<WebhookConfig.url>/<route>`,
 * 128 random bits chosen before the server is asked, never the subscription id, which is a
 * bearer capability the sketch says not to put in URLs). Each delivery is checked by
 * `createReceiver` of @doorbell/webhooks (X-MCP-* for the sketch, Standard Webhooks for SEP-3415;
 * ±300 s, constant time, each id processed once) with that subscription's secrets, then decoded
 * by the dialect and handed to the subscription. A verification challenge is answered only for a
 * path this client made, signed with its secret, naming its subscription id (any id while the
 * `events/subscribe` that names it is still answering).
 */
import {
  createMemoryDedupStore,
  createReceiver,
  type DedupStore,
  MCP_SIGNATURE,
  MCP_SUBSCRIPTION_ID,
  type Receiver,
  toNodeHandler,
  WEBHOOK_SIGNATURE,
} from "@doorbell/webhooks";
import type { EventsDialect } from "../../protocol/dialect.js";
import type { WebhookBody } from "../../protocol/model.js";
import { webhookBodyCursors } from "../null-cursors.js";

export interface WebhookRoute {
  readonly dialect: EventsDialect;
  /** The secrets deliveries may be signed with now (current, and the previous during a change). */
  secrets(): string[];
  /** Resolves when no `events/subscribe` of this route is in flight (a new secret may be on its way). */
  settled(): Promise<void>;
  /**
   * True while an `events/subscribe` is in flight that may come back with a secret made by the
   * server (the sketch's default): its challenge is signed with a secret this client cannot know yet.
   */
  awaitingServerSecret(): boolean;
  /** The server's id of this subscription, once known. */
  subscriptionId(): string | undefined;
  /** Runs once per verified delivery; throwing makes the server retry. */
  deliver(body: WebhookBody): Promise<void>;
}

export interface WebhookReceiverOptions {
  clock?: () => number;
  /** How long a delivery waits for a subscribe in flight to name its secret (default 10 s). */
  pendingSecretWaitMs?: number;
  toleranceSeconds?: number;
  dedup?: DedupStore;
}

export class EventsWebhookReceiver {
  readonly #routes = new Map<
    string,
    { route: WebhookRoute; receivers: Record<"mcp" | "standard", Receiver> }
  >();
  readonly #ended = new Set<string>();
  readonly #clock: () => number;
  readonly #wait: number;
  readonly #tolerance: number | undefined;
  readonly #dedup: DedupStore;

  /** Web-standard: mount on Hono, Deno, Bun, Workers… at the WebhookConfig URL's path. */
  readonly fetch: (request: Request) => Promise<Response>;
  /** The same for node:http: `http.createServer(receiver.node)`. */
  readonly node: ReturnType<typeof toNodeHandler>;

  constructor(options: WebhookReceiverOptions = {}) {
    this.#clock = options.clock ?? Date.now;
    this.#wait = options.pendingSecretWaitMs ?? 10_000;
    this.#tolerance = options.toleranceSeconds;
    this.#dedup = options.dedup ?? createMemoryDedupStore();
    this.fetch = (request) => this.#handle(request);
    this.node = toNodeHandler(this.fetch);
  }

  /** Serves `token`'s path; the returned function retires it (later deliveries get 410 Gone). */
  register(token: string, route: WebhookRoute): () => void {
    this.#ended.delete(token);
    const entry = {
      route,
      receivers: { mcp: this.#receiverFor(route, "mcp"), standard: this.#receiverFor(route, "standard") },
    };
    this.#routes.set(token, entry);
    return () => {
      if (this.#routes.get(token) !== entry) return;
      this.#routes.delete(token);
      this.#ended.add(token);
    };
  }

  async #handle(request: Request): Promise<Response> {
    const token = lastSegment(new URL(request.url).pathname);
    const entry = token === undefined ? undefined : this.#routes.get(token);
    if (!entry) {
      await request.body?.cancel().catch(() => {});
      return token !== undefined && this.#ended.has(token)
        ? json(410, { error: "ERR_EVENTS_SUBSCRIPTION_ENDED", message: "this subscription has ended" })
        : json(404, {
            error: "ERR_EVENTS_UNKNOWN_ENDPOINT",
            message: "no subscription of this client uses this path",
          });
    }
    const refusal: { response?: Response } = {};
    // The dialect names a scheme, but the headers say which one signed this request: a server
    // whose SEP-3415 wire still signs with X-MCP-* is verified with the same secret.
    const scheme = request.headers.has(MCP_SIGNATURE)
      ? "mcp"
      : request.headers.has(WEBHOOK_SIGNATURE)
        ? "standard"
        : entry.route.dialect.signature;
    const response = await entry.receivers[scheme](withRefusal(request, refusal));
    // The receiver answers 500 (retry) to any handler error; a body that will never be valid is 400.
    return refusal.response ?? response;
  }

  #receiverFor(route: WebhookRoute, scheme: "mcp" | "standard"): Receiver {
    const receiver = createReceiver({
      scheme,
      clock: this.#clock,
      dedup: this.#dedup,
      ...(this.#tolerance === undefined ? {} : { toleranceSeconds: this.#tolerance }),
      keys: async () => {
        // A refresh in flight may bring a new server-made secret: wait for it (bounded).
        if (route.awaitingServerSecret()) await Promise.race([route.settled(), delay(this.#wait)]);
        const secrets = route.secrets();
        return secrets.length > 0 ? { secrets } : undefined;
      },
      onChallenge: (challenge, request) =>
        challenge.kind === "mcp-events" &&
        isOwn(route, challenge.subscriptionId ?? request.headers.get(MCP_SUBSCRIPTION_ID) ?? undefined),
      handler: async (event) => {
        const refusal = refusals.get(event.headers);
        let body: WebhookBody;
        try {
          body = route.dialect.webhook.decode(
            webhookBodyCursors(event.json),
            event.subscriptionId ?? event.headers.get(MCP_SUBSCRIPTION_ID) ?? undefined,
          );
        } catch {
          if (refusal)
            refusal.response = json(400, {
              error: "ERR_EVENTS_INVALID_BODY",
              message: "the body is not an MCP Events delivery",
            });
          throw new Error("invalid body");
        }
        if (!isOwn(route, body.subscriptionId)) {
          if (refusal)
            refusal.response = json(400, {
              error: "ERR_EVENTS_WRONG_SUBSCRIPTION",
              message: "this path belongs to another subscription",
            });
          throw new Error("wrong subscription");
        }
        await route.deliver(body);
      },
    });
    return receiver;
  }
}

const refusals = new WeakMap<Headers, { response?: Response }>();

/** Lets the handler, which sees only the request's headers, leave a refusal for this request. */
function withRefusal(request: Request, refusal: { response?: Response }): Request {
  refusals.set(request.headers, refusal);
  return request;
}

function isOwn(route: WebhookRoute, id: string | undefined): boolean {
  const known = route.subscriptionId();
  // While events/subscribe is answering, SEP-3415's server-derived id is not known yet: the
  // signature with this route's own secret is the proof.
  if (known === undefined) return true;
  return id === undefined || id === "" || id === known;
}

function lastSegment(pathname: string): string | undefined {
  return pathname
    .split("/")
    .filter((segment) => segment !== "")
    .at(-1);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref?.());
}

function json(status: number, value: unknown): Response {
  return new Response(JSON.stringify(value), { status, headers: { "content-type": "application/json" } });
}
