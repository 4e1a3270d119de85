import { McpServer as V2McpServer, Server as V2Server } from "@modelcontextprotocol/server";
import { z } from "zod";
import {
  type EVENTS_METHODS,
  EVENTS_NOTIFICATIONS,
  EventsError,
  eventsCapabilities,
  type JsonObject,
  WireError,
} from "../protocol/index.js";
import { type CallContext, fromV1, fromV2, type V1Extra, type V2Context } from "./context.js";
import { type Core, wireError, wireOf } from "./core.js";

export type EventsMethod = (typeof EVENTS_METHODS)[keyof typeof EVENTS_METHODS];

/** A `@modelcontextprotocol/sdk` 1.x server, as far as attaching reads it (no 1.x import needed). */
export interface V1ServerLike {
  registerCapabilities(capabilities: never): void;
  setRequestHandler(schema: never, handler: never): void;
  notification(notification: never): Promise<void>;
  onclose?: (() => void) | undefined;
}

/** What `attach` accepts: a 2.x `McpServer`/`Server`, or a 1.x `McpServer` (`.server`) / `Server`. */
export type AttachTarget = V2McpServer | V2Server | V1ServerLike | { server: V1ServerLike };

export interface AttachOptions {
  /**
   * 2.x only: this server lives for a session (a sessionful 2025-11-25 transport), so it also
   * sends `notifications/events/list_changed` until it closes. Per-request servers (the default,
   * `createMcpHandler`) hear list changes through `subscriptions/listen` (withEventsListen).
   */
  session?: boolean;
}

interface AttacherDeps {
  core: Core;
  methods: Record<EventsMethod, (params: unknown, call: CallContext) => Promise<JsonObject> | JsonObject>;
  onListChanged(listener: () => void): () => void;
}

/**
 * Builds the handlers once, so attaching to a fresh per-request server costs only the SDK's
 * `setRequestHandler` calls: no closures, schemas or capability objects per request.
 */
export function createAttacher(deps: AttacherDeps) {
  const { core, methods } = deps;
  const capabilities = eventsCapabilities({ listChanged: true });
  const entries = Object.entries(methods) as [EventsMethod, AttacherDeps["methods"][EventsMethod]][];

  // An events error is answered in the caller's dialect (what its params say, else its era).
  const run = async (method: EventsMethod, params: unknown, call: CallContext): Promise<JsonObject> => {
    try {
      return await methods[method](params, call);
    } catch (error) {
      if (error instanceof EventsError) throw new WireError(wireError(wireOf(core, params, call), error));
      throw error;
    }
  };

  const anyParams = { params: z.unknown() };
  const v2Handlers = entries.map(
    ([method]) =>
      [method, (params: unknown, ctx: V2Context) => run(method, params ?? {}, fromV2(ctx))] as const,
  );
  const v1Handlers = entries.map(
    ([method]) =>
      [
        z.object({ method: z.literal(method), params: z.unknown().optional() }),
        (request: { params?: unknown }, extra: V1Extra) => run(method, request.params ?? {}, fromV1(extra)),
      ] as const,
  );

  const attachV2 = (server: V2Server, options: AttachOptions) => {
    server.registerCapabilities(capabilities as never);
    for (const [method, handler] of v2Handlers) server.setRequestHandler(method, anyParams, handler as never);
    if (options.session) followListChanges(server, deps, (notification) => server.notification(notification));
  };

  const attachV1 = (server: V1ServerLike) => {
    server.registerCapabilities(capabilities as never);
    for (const [schema, handler] of v1Handlers) server.setRequestHandler(schema as never, handler as never);
    followListChanges(server, deps, (notification) => server.notification(notification as never));
  };

  return {
    attach(target: AttachTarget, options: AttachOptions = {}): void {
      if (target instanceof V2McpServer) attachV2(target.server, options);
      else if (target instanceof V2Server) attachV2(target, options);
      else attachV1("server" in target ? target.server : target);
    },
  };
}

/** A long-lived server sends `notifications/events/list_changed` until its transport closes. */
function followListChanges(
  server: { onclose?: (() => void) | undefined },
  deps: AttacherDeps,
  send: (notification: { method: string }) => Promise<void>,
): void {
  const stop = deps.onListChanged(() => {
    send({ method: EVENTS_NOTIFICATIONS.listChanged }).catch(() => undefined);
  });
  const previous = server.onclose;
  server.onclose = () => {
    stop();
    previous?.();
  };
}
