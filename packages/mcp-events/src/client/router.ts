/**
 * Routes `notifications/events/*` to the open `events/stream` they belong to. The SDK allows one
 * handler per method per Client, so the router installs them once per Client and dispatches by
 * the sketch's client-chosen `id` when the server echoes it, else by the JSON-RPC request id.
 * Each Client's notifications are read in the dialect spoken on it.
 */
import type { Client } from "@modelcontextprotocol/client";
import { z } from "zod";
import type { EventsDialect } from "../protocol/dialect.js";
import { EVENTS_NOTIFICATIONS, SUBSCRIPTION_ID_META } from "../protocol/methods.js";
import type {
  RequestId,
  StreamActive,
  StreamEvent,
  StreamHeartbeat,
  StreamProblem,
} from "../protocol/model.js";
import { notificationCursors } from "./null-cursors.js";

export interface StreamListener {
  active(n: StreamActive): void;
  event(n: StreamEvent): void;
  error(n: StreamProblem): void;
  terminated(n: StreamProblem): void;
  heartbeat(n: StreamHeartbeat): void;
  /** A notification for this stream that the dialect cannot read. */
  malformed(method: string): void;
}

type Kind = "active" | "event" | "error" | "terminated" | "heartbeat";
const KINDS: readonly Kind[] = ["active", "event", "error", "terminated", "heartbeat"];

export class StreamRouter {
  readonly #byRoute = new Map<string, StreamListener>();
  readonly #byRequest = new Map<string, StreamListener>();
  readonly #installed = new WeakSet<Client>();
  readonly #dialectOf: (client: Client) => EventsDialect;
  readonly #onListChanged: () => void;

  constructor(dialectOf: (client: Client) => EventsDialect, onListChanged: () => void) {
    this.#dialectOf = dialectOf;
    this.#onListChanged = onListChanged;
  }

  install(client: Client): void {
    if (this.#installed.has(client)) return;
    this.#installed.add(client);
    // v2 hands custom notifications their params with the envelope keys lifted out; the
    // subscriptionId `_meta` key is not one of them, so routing by it still works.
    for (const kind of KINDS) {
      const method = EVENTS_NOTIFICATIONS[kind];
      client.setNotificationHandler(method, { params: anyParams }, (params) => {
        this.#dispatch(this.#dialectOf(client), kind, method, params ?? {});
      });
    }
    client.setNotificationHandler(EVENTS_NOTIFICATIONS.listChanged, { params: anyParams }, () => {
      this.#onListChanged();
    });
  }

  addRoute(routeId: string, listener: StreamListener): () => void {
    this.#byRoute.set(routeId, listener);
    return () => {
      if (this.#byRoute.get(routeId) === listener) this.#byRoute.delete(routeId);
    };
  }

  addRequest(requestId: RequestId, listener: StreamListener): () => void {
    const key = String(requestId);
    this.#byRequest.set(key, listener);
    return () => {
      if (this.#byRequest.get(key) === listener) this.#byRequest.delete(key);
    };
  }

  #dispatch(dialect: EventsDialect, kind: Kind, method: string, params: Record<string, unknown>): void {
    const listener = this.#find(params);
    if (!listener) return;
    const codec = dialect.stream[kind];
    let decoded: unknown;
    try {
      decoded = codec.decode(notificationCursors(kind, params));
    } catch {
      listener.malformed(method);
      return;
    }
    (listener[kind] as (n: unknown) => void)(decoded);
  }

  /** By the raw params, so a notification the dialect cannot read still reaches its stream. */
  #find(params: Record<string, unknown>): StreamListener | undefined {
    const routeId = params.id;
    if (typeof routeId === "string") {
      const byRoute = this.#byRoute.get(routeId);
      if (byRoute) return byRoute;
    }
    const meta = params._meta as Record<string, unknown> | undefined;
    const requestId = params.requestId ?? meta?.[SUBSCRIPTION_ID_META];
    if (typeof requestId === "string" || typeof requestId === "number") {
      return this.#byRequest.get(String(requestId));
    }
    return undefined;
  }
}

/** The dialect reads the params; the SDK only checks that they are an object, or absent. */
const anyParams = z.looseObject({}).optional();
