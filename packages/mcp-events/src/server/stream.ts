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
    const core = this.core;
    const wire = wireOf(core, raw, call);
    const query = wire.stream.params.decode(raw);
    const subscriptionId = newId("push_");
    const { def, params, ctx } = await resolve(core, query, "push", call, subscriptionId);
    const { stream, ended } = openStream(core, wire, query, call);

    // A wake-up before the stream is active is left to the first interval check.
    let wake = () => {};
    const sub: LiveSubscription = {
      id: subscriptionId,
      mode: "push",
      def,
      params,
      ctx,
      deliver: (event) => void stream.sendEvent(event),
      wake: () => wake(),
      terminate: async (error) => stream.finish({ by: "server", error }),
    };
    await core.live.add(sub);
    const key = streamKey(call.sessionId, stream.requestId);
    this.open.set(key, stream.finish);
    const onAbort = () => stream.finish({ by: "client" });
    call.signal.addEventListener("abort", onAbort, { once: true });
    const timers: NodeJS.Timeout[] = [];

    try {
      const { truncated, expired, replay } = await startingPoint(stream, sub);
      await stream.send(
        EVENTS_NOTIFICATIONS.active,
        wire.stream.active.encode({
          requestId: stream.requestId,
          ...route(stream.routeId),
          cursor: stream.cursor,
          truncated,
        }),
      );
      if (expired) await sendProblem(stream, "error", expired);
      for (const event of replay) await stream.sendEvent(event);

      if (def.check) {
        const check = checkDriven(stream, sub);
        wake = () => void check();
        timers.push(setInterval(wake, core.settings.pushIntervalMs));
      }
      timers.push(
        setInterval(() => {
          void stream.send(
            EVENTS_NOTIFICATIONS.heartbeat,
            wire.stream.heartbeat.encode({ requestId: stream.requestId, cursor: stream.cursor }),
          );
        }, core.settings.heartbeatMs),
      );
      if (def.authorize) timers.push(reauthorizeEvery(stream, sub, core.settings.reauthorizeMs));

      const ending = await ended;
      if (ending.by === "server" && ending.error) await sendProblem(stream, "terminated", ending.error);
      await stream.outbox;
      stream.over = true;
      return wire.stream.result.encode({ requestId: stream.requestId });
    } finally {
      stream.over = true;
      for (const timer of timers) clearInterval(timer);
      call.signal.removeEventListener("abort", onAbort);
      this.open.delete(key);
      await core.live.remove(sub);
    }
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

/**
 * One open stream as its pieces share it: where it has read to, whether it is over, and the two
 * senders that keep notifications in order (through the SDK, or written to a response we own).
 */
interface OpenStream {
  readonly core: Core;
  readonly wire: EventsDialect;
  readonly requestId: RequestId;
  readonly routeId: string | undefined;
  readonly young: ((event: Pick<EventOccurrence, "timestamp">) => boolean) | undefined;
  cursor: string | null;
  over: boolean;
  outbox: Promise<void>;
  finish(ending: Ending): void;
  send(method: string, payload: JsonObject): Promise<void>;
  sendEvent(event: EventOccurrence): Promise<void>;
}

function openStream(
  core: Core,
  wire: EventsDialect,
  query: { cursor: string | null; routeId?: string; maxAgeMs?: number },
  call: CallContext,
): { stream: OpenStream; ended: Promise<Ending> } {
  const requestId: RequestId = call.requestId;
  let finish!: (ending: Ending) => void;
  const ended = new Promise<Ending>((resolveEnding) => {
    finish = resolveEnding;
  });
  // Where the extension writes the response itself, notifications skip the SDK (owned-streams.ts);
  // a dropped connection is still reported through `call.signal` / `disconnected`.
  const sink = core.owned.claim(call.sessionId, requestId);
  const eventText = sink && eventNotifications(wire, requestId, query.routeId);
  const stream: OpenStream = {
    core,
    wire,
    requestId,
    routeId: query.routeId,
    young: youngEnough(query.maxAgeMs, core.clock),
    cursor: query.cursor,
    over: false,
    outbox: Promise.resolve(),
    finish: (ending) => finish(ending),
    send(method, payload) {
      if (stream.over) return stream.outbox;
      if (sink) {
        sink.write(notificationJson(method, payload));
        return stream.outbox;
      }
      stream.outbox = stream.outbox
        .then(() => call.notify(method, payload))
        .catch(() => finish({ by: "client" }));
      return stream.outbox;
    },
    sendEvent(event) {
      if (event.cursor !== undefined) stream.cursor = event.cursor;
      // Too old for maxAgeMs: passed over (the cursor still moves past it), not delivered.
      if (stream.young && !stream.young(event)) return stream.outbox;
      if (sink && eventText) {
        if (!stream.over) sink.write(eventText(event));
        return stream.outbox;
      }
      return stream.send(
        EVENTS_NOTIFICATIONS.event,
        wire.stream.event.encode({ requestId, ...route(query.routeId), event }),
      );
    },
  };
  return { stream, ended };
}

/**
 * Where the stream starts, and whether the client's cursor could be honoured: sets the stream's
 * cursor and returns the buffered events to replay.
 */
async function startingPoint(
  stream: OpenStream,
  sub: LiveSubscription,
): Promise<{ truncated: boolean; expired: EventsError | undefined; replay: EventOccurrence[] }> {
  const { core, wire, young } = stream;
  const { def, ctx, params } = sub;
  let truncated = false;
  let expired: EventsError | undefined;
  let replay: EventOccurrence[] = [];
  if (def.check) {
    if (stream.cursor === null) stream.cursor = (await runCheck(core, def, ctx, params, null, 1)).cursor;
  } else if (stream.cursor === null && !young) {
    stream.cursor = core.buffer.now();
  } else {
    const mine = (entry: BufferEntry) =>
      (entry.target === undefined || entry.target === sub.id) && (!young || young(entry.event));
    // No cursor but maxAgeMs: replay from the oldest kept event that young.
    const read =
      stream.cursor === null
        ? core.buffer.readRecent(def.name, Number.MAX_SAFE_INTEGER, mine)
        : core.buffer.read(def.name, stream.cursor, Number.MAX_SAFE_INTEGER, mine);
    if (read.ok) {
      replay = read.entries.flatMap((entry) => {
        const event = shape(sub, entry.event);
        return event ? [Object.assign({}, event, { cursor: core.buffer.cursorOf(entry.seq) })] : [];
      });
      if (replay.length === 0) stream.cursor = read.cursor;
      // Started without a cursor: active names the place just before the first replayed event.
      else if (stream.cursor === null)
        stream.cursor = core.buffer.cursorOf((read.entries[0] as BufferEntry).seq - 1);
    } else {
      stream.cursor = core.buffer.now();
      if (wire.cursorExpiry === "error") expired = new EventsError("CursorExpired", { reason: read.reason });
      else truncated = true;
    }
  }
  return { truncated, expired, replay };
}

/** A check-driven event: one run of its check function at a time, sending what it finds. */
function checkDriven(stream: OpenStream, sub: LiveSubscription): () => Promise<void> {
  const { core, wire } = stream;
  const { def, ctx, params } = sub;
  const maxEvents = core.settings.maxMaxEvents;
  return serialized(async () => {
    if (stream.over) return;
    try {
      const batch = await runCheck(core, def, ctx, params, stream.cursor, maxEvents);
      for (const event of batch.events) await stream.sendEvent(event);
      stream.cursor = batch.cursor;
    } catch (error) {
      if (error instanceof EventsError && error.kind === "CursorExpired") {
        stream.cursor =
          (await runCheck(core, def, ctx, params, null, 1).catch(() => undefined))?.cursor ?? stream.cursor;
        if (wire.cursorExpiry === "truncate") {
          await stream.send(
            EVENTS_NOTIFICATIONS.active,
            wire.stream.active.encode({
              requestId: stream.requestId,
              cursor: stream.cursor,
              truncated: true,
            }),
          );
          return;
        }
      }
      await sendProblem(stream, "error", error);
    }
  });
}

/** Asks the event's authorize again now and then; a refusal ends the stream. */
function reauthorizeEvery(stream: OpenStream, sub: LiveSubscription, everyMs: number): NodeJS.Timeout {
  return setInterval(() => {
    authorize(sub.def, sub.ctx, sub.params).catch((error: unknown) =>
      stream.finish({
        by: "server",
        error:
          error instanceof EventsError
            ? error
            : new EventsError("Unauthorized", { reason: "Access revoked" }),
      }),
    );
  }, everyMs);
}

function sendProblem(stream: OpenStream, kind: "error" | "terminated", error: unknown): Promise<void> {
  const { wire, requestId, routeId } = stream;
  const codec = kind === "error" ? wire.stream.error : wire.stream.terminated;
  const method = kind === "error" ? EVENTS_NOTIFICATIONS.error : EVENTS_NOTIFICATIONS.terminated;
  return stream.send(method, codec.encode({ requestId, ...route(routeId), error: wireError(wire, error) }));
}

function streamKey(sessionId: string | undefined, requestId: RequestId): string {
  return `${sessionId ?? ""}\u0000${typeof requestId}:${requestId}`;
}

function route(routeId: string | undefined): { routeId?: string } {
  return routeId === undefined ? {} : { routeId };
}
