import {
  EVENTS_NOTIFICATIONS,
  type EventOccurrence,
  type EventsDialect,
  EventsError,
  type JsonObject,
  type RequestId,
} from "../protocol/index.js";
import {
  authorize,
  type CallContext,
  type Core,
  type LiveSubscription,
  newId,
  resolve,
  runCheck,
  serialized,
  shape,
  wireError,
  wireOf,
  youngEnough,
} from "./core.js";
import type { BufferEntry } from "./emit-buffer.js";
import { eventNotifications, notificationJson } from "./frames.js";

/** Why a stream ended: the client left, the server terminated it, or the server is closing. */
type Ending = { by: "client" } | { by: "server"; error?: EventsError };

/**
 * `events/stream`: one long-lived request per subscription. Notifications go out with the
 * request's id as `relatedRequestId`, so on Streamable HTTP they are the SSE response of the POST
 * and on stdio they share stdout, routed by `requestId`. The handler's promise stays pending for
 * the stream's life; the final `StreamEventsResult` is returned only when the server ends it.
 */
export class StreamMode {
  /** Open streams by (session, request id), so a transport can report a dropped connection. */
  private readonly open = new Map<string, (ending: Ending) => void>();

  constructor(private readonly core: Core) {}

  async handle(raw: unknown, call: CallContext): Promise<JsonObject> {
    const wire = wireOf(this.core, raw, call);
    const query = wire.stream.params.decode(raw);
    const subscriptionId = newId("push_");
    const { def, params, ctx } = await resolve(this.core, query, "push", call, subscriptionId);
    const requestId: RequestId = call.requestId;
    const core = this.core;
    const settings = core.settings;

    let finish!: (ending: Ending) => void;
    const ended = new Promise<Ending>((resolveEnding) => {
      finish = resolveEnding;
    });
    let over = false;
    let outbox: Promise<void> = Promise.resolve();
    // Where the extension writes the response itself, notifications skip the SDK (owned-streams.ts);
    // a dropped connection is still reported through `call.signal` / `disconnected`.
    const sink = core.owned.claim(call.sessionId, requestId);
    const send = (method: string, payload: JsonObject): Promise<void> => {
      if (over) return outbox;
      if (sink) {
        sink.write(notificationJson(method, payload));
        return outbox;
      }
      outbox = outbox.then(() => call.notify(method, payload)).catch(() => finish({ by: "client" }));
      return outbox;
    };
    let cursor: string | null = query.cursor;
    const eventText = sink && eventNotifications(wire, requestId, query.routeId);
    const young = youngEnough(query.maxAgeMs, core.clock);
    const sendEvent = (event: EventOccurrence) => {
      if (event.cursor !== undefined) cursor = event.cursor;
      // Too old for maxAgeMs: passed over (the cursor still moves past it), not delivered.
      if (young && !young(event)) return outbox;
      if (sink && eventText) {
        if (!over) sink.write(eventText(event));
        return outbox;
      }
      return send(
        EVENTS_NOTIFICATIONS.event,
        wire.stream.event.encode({ requestId, ...route(query.routeId), event }),
      );
    };

    // A wake-up before the stream is active is left to the first interval check.
    let wake = () => {};
    const sub: LiveSubscription = {
      id: subscriptionId,
      mode: "push",
      def,
      params,
      ctx,
      deliver: (event) => void sendEvent(event),
      wake: () => wake(),
      terminate: async (error) => finish({ by: "server", error }),
    };
    await core.live.add(sub);
    const key = streamKey(call.sessionId, requestId);
    this.open.set(key, finish);
    const onAbort = () => finish({ by: "client" });
    call.signal.addEventListener("abort", onAbort, { once: true });
    const timers: NodeJS.Timeout[] = [];

    try {
      // Where the stream starts, and whether the client's cursor could be honoured.
      let truncated = false;
      let expired: EventsError | undefined;
      let replay: EventOccurrence[] = [];
      if (def.check) {
        if (cursor === null) cursor = (await runCheck(core, def, ctx, params, null, 1)).cursor;
      } else if (cursor === null && !young) {
        cursor = core.buffer.now();
      } else {
        const mine = (entry: BufferEntry) =>
          (entry.target === undefined || entry.target === subscriptionId) && (!young || young(entry.event));
        // No cursor but maxAgeMs: replay from the oldest kept event that young.
        const read =
          cursor === null
            ? core.buffer.readRecent(def.name, Number.MAX_SAFE_INTEGER, mine)
            : core.buffer.read(def.name, cursor, Number.MAX_SAFE_INTEGER, mine);
        if (read.ok) {
          replay = read.entries.flatMap((entry) => {
            const event = shape(sub, entry.event);
            return event ? [Object.assign({}, event, { cursor: core.buffer.cursorOf(entry.seq) })] : [];
          });
          if (replay.length === 0) cursor = read.cursor;
          // Started without a cursor: active names the place just before the first replayed event.
          else if (cursor === null) cursor = core.buffer.cursorOf((read.entries[0] as BufferEntry).seq - 1);
        } else {
          cursor = core.buffer.now();
          if (wire.cursorExpiry === "error")
            expired = new EventsError("CursorExpired", { reason: read.reason });
          else truncated = true;
        }
      }
      await send(
        EVENTS_NOTIFICATIONS.active,
        wire.stream.active.encode({ requestId, ...route(query.routeId), cursor, truncated }),
      );
      if (expired) await this.problem(wire, send, "error", requestId, query.routeId, expired);
      for (const event of replay) await sendEvent(event);

      if (def.check) {
        const maxEvents = settings.maxMaxEvents;
        const check = serialized(async () => {
          if (over) return;
          try {
            const batch = await runCheck(core, def, ctx, params, cursor, maxEvents);
            for (const event of batch.events) await sendEvent(event);
            cursor = batch.cursor;
          } catch (error) {
            if (error instanceof EventsError && error.kind === "CursorExpired") {
              cursor =
                (await runCheck(core, def, ctx, params, null, 1).catch(() => undefined))?.cursor ?? cursor;
              if (wire.cursorExpiry === "truncate") {
                await send(
                  EVENTS_NOTIFICATIONS.active,
                  wire.stream.active.encode({ requestId, cursor, truncated: true }),
                );
                return;
              }
            }
            await this.problem(wire, send, "error", requestId, query.routeId, error);
          }
        });
        wake = () => void check();
        timers.push(setInterval(wake, settings.pushIntervalMs));
      }
      timers.push(
        setInterval(() => {
          void send(EVENTS_NOTIFICATIONS.heartbeat, wire.stream.heartbeat.encode({ requestId, cursor }));
        }, settings.heartbeatMs),
      );
      if (def.authorize) {
        timers.push(
          setInterval(() => {
            authorize(def, ctx, params).catch((error: unknown) =>
              finish({
                by: "server",
                error:
                  error instanceof EventsError
                    ? error
                    : new EventsError("Unauthorized", { reason: "Access revoked" }),
              }),
            );
          }, settings.reauthorizeMs),
        );
      }

      const ending = await ended;
      if (ending.by === "server" && ending.error)
        await this.problem(wire, send, "terminated", requestId, query.routeId, ending.error);
      await outbox;
      over = true;
      return wire.stream.result.encode({ requestId });
    } finally {
      over = true;
      for (const timer of timers) clearInterval(timer);
      call.signal.removeEventListener("abort", onAbort);
      this.open.delete(key);
      await core.live.remove(sub);
    }
  }

  private problem(
    wire: EventsDialect,
    send: (method: string, payload: JsonObject) => Promise<void>,
    kind: "error" | "terminated",
    requestId: RequestId,
    routeId: string | undefined,
    error: unknown,
  ): Promise<void> {
    const codec = kind === "error" ? wire.stream.error : wire.stream.terminated;
    const method = kind === "error" ? EVENTS_NOTIFICATIONS.error : EVENTS_NOTIFICATIONS.terminated;
    return send(method, codec.encode({ requestId, ...route(routeId), error: wireError(wire, error) }));
  }

  /** The transport saw the request's connection close (Streamable HTTP): stop that stream. */
  disconnected(sessionId: string | undefined, requestId: RequestId): void {
    this.open.get(streamKey(sessionId, requestId))?.({ by: "client" });
  }

  /** Ends every stream with its final result (server shutdown). */
  close(): void {
    for (const finish of [...this.open.values()]) finish({ by: "server" });
  }
}

function streamKey(sessionId: string | undefined, requestId: RequestId): string {
  return `${sessionId ?? ""}\u0000${typeof requestId}:${requestId}`;
}

function route(routeId: string | undefined): { routeId?: string } {
  return routeId === undefined ? {} : { routeId };
}
