/**
 * Push mode (sketch, "Push-Based Delivery"): one long-lived `events/stream` per subscription.
 * The SDK's request timeout is not applied; instead a watchdog takes the stream as dead when
 * neither an event nor a heartbeat arrived within the window (2 × the 30 s heartbeat) and opens
 * a new one from the last cursor. A stream the server ended, or a dropped connection, is opened
 * again the same way; `terminated` ends the subscription.
 */
import { randomUUID } from "node:crypto";
import type { Client } from "@modelcontextprotocol/client";
import type { EventsDialect } from "../../protocol/dialect.js";
import { EVENTS_METHODS } from "../../protocol/methods.js";
import { backoffMs } from "../backoff.js";
import type { DriverContext } from "../context.js";
import { EventsClientError } from "../errors.js";
import { onRequestId, ROUTE_META } from "../request-ids.js";
import type { StreamListener } from "../router.js";
import { serverWords } from "../server-words.js";
import { fromErrorObject, fromRequestError, isFinal, looseResult } from "../wire.js";

/** Node's timers cap at 2^31-1 ms; the heartbeat, not this, is the stream's liveness. */
const NO_TIMEOUT = 2_147_483_647;

type Ending =
  | { kind: "restart"; reason: "heartbeat-missed" | "stream-ended" }
  | { kind: "cursor-expired" }
  | { kind: "failed"; error: EventsClientError; client: Client | undefined };

export async function runPush(ctx: DriverContext): Promise<void> {
  let failures = 0;
  while (!ctx.signal.aborted) {
    const ending = await openStream(ctx, () => {
      failures = 0;
    });
    if (ctx.signal.aborted) return;
    if (ending.kind === "cursor-expired") {
      await ctx.restart("cursor-expired", null);
      continue;
    }
    if (ending.kind === "failed") {
      const { error } = ending;
      if (error.code === "ERR_EVENTS_CURSOR_EXPIRED" && ctx.record.cursor !== null) {
        await ctx.restart("cursor-expired", null);
        continue;
      }
      if (!ctx.isReady || isFinal(error)) throw error;
      if (error.code === "ERR_EVENTS_UNREACHABLE" && ending.client) ctx.connection.failed(ending.client);
    }
    failures += 1;
    const reason =
      ending.kind === "restart"
        ? ending.reason
        : ending.error.code === "ERR_EVENTS_UNREACHABLE"
          ? "unreachable"
          : "server-error";
    ctx.notice({ type: "reconnecting", reason, attempt: failures });
    // A missed heartbeat reconnects at once; anything else waits, so a failing server is not hammered.
    if (!(ending.kind === "restart" && reason === "heartbeat-missed" && failures === 1)) {
      await ctx.timers.sleep(backoffMs(failures), ctx.signal);
    }
  }
}

/** One `events/stream` request, from open to its end; never throws. */
async function openStream(ctx: DriverContext, onActive: () => void): Promise<Ending> {
  const stream = new AbortController();
  const relay = () => stream.abort();
  ctx.signal.addEventListener("abort", relay, { once: true });
  const unroute: (() => void)[] = [];
  let client: Client | undefined;
  let dialect: EventsDialect | undefined;
  let lastSeen = ctx.timers.now();
  let stop: Ending | undefined;
  let chain: Promise<void> = Promise.resolve();
  const end = (ending: Ending) => {
    stop ??= ending;
    stream.abort();
  };
  const queue = (step: () => Promise<void>) => {
    chain = chain.then(step).catch((error: unknown) => {
      end({ kind: "failed", error: asClientError(dialect, error), client });
    });
  };

  const listener: StreamListener = {
    active(n) {
      lastSeen = ctx.timers.now();
      queue(async () => {
        // Truncated: the cursor sent was void. Otherwise a null cursor (no replay) keeps the last
        // real one for the next stream to start from.
        if (n.truncated) await ctx.restart("truncated", n.cursor);
        else await ctx.setCursor(n.cursor);
        onActive();
        ctx.ready();
      });
    },
    event(n) {
      lastSeen = ctx.timers.now();
      queue(() => ctx.deliver([n.event], n.event.cursor));
    },
    heartbeat(n) {
      lastSeen = ctx.timers.now();
      const cursor = n.cursor;
      if (typeof cursor === "string") queue(() => ctx.setCursor(cursor));
    },
    error(n) {
      lastSeen = ctx.timers.now();
      const error = fromErrorObject(dialect, n.error, "events/stream");
      if (error.code === "ERR_EVENTS_CURSOR_EXPIRED") end({ kind: "cursor-expired" });
      else ctx.notice({ type: "error", error });
    },
    terminated(n) {
      const reason = fromErrorObject(dialect, n.error, "events/stream");
      end({ kind: "failed", error: terminatedError(ctx.name, reason), client });
    },
    malformed(method) {
      lastSeen = ctx.timers.now();
      ctx.notice({
        type: "error",
        error: new EventsClientError(
          "ERR_EVENTS_PROTOCOL",
          `the server sent a ${method} this client cannot read`,
        ),
      });
    },
  };

  try {
    client = await ctx.connection.get();
    dialect = ctx.dialectOf(client);
    const routeId = randomUUID();
    const params = {
      ...dialect.stream.params.encode({
        routeId,
        name: ctx.name,
        params: ctx.params,
        cursor: ctx.record.cursor,
      }),
      _meta: { [ROUTE_META]: routeId },
    };
    unroute.push(ctx.router.addRoute(routeId, listener));
    unroute.push(
      onRequestId(
        client,
        routeId,
        (id) => unroute.push(ctx.router.addRequest(id, listener)),
        // The response stream ended (dropped, or closed by the server). Its last messages are
        // handled first: a final result or error settles the request in the microtasks before.
        () => setImmediate(() => end({ kind: "restart", reason: "stream-ended" })),
      ),
    );
    const request = client.request({ method: EVENTS_METHODS.stream, params }, looseResult, {
      signal: stream.signal,
      timeout: NO_TIMEOUT,
    });
    const watchdog = watch(
      ctx,
      stream.signal,
      () => lastSeen,
      () => end({ kind: "restart", reason: "heartbeat-missed" }),
    );
    try {
      await request;
      // The server closed the stream with its final result: open it again from the cursor.
      end({ kind: "restart", reason: "stream-ended" });
    } catch (error) {
      if (!stream.signal.aborted)
        end({ kind: "failed", error: fromRequestError(dialect, EVENTS_METHODS.stream, error), client });
    }
    stream.abort();
    await watchdog;
    await chain;
    return stop ?? { kind: "restart", reason: "stream-ended" };
  } catch (error) {
    return { kind: "failed", error: asClientError(dialect, error), client };
  } finally {
    ctx.signal.removeEventListener("abort", relay);
    for (const remove of unroute) remove();
  }
}

async function watch(ctx: DriverContext, signal: AbortSignal, lastSeen: () => number, onSilence: () => void) {
  while (!signal.aborted) {
    const due = lastSeen() + ctx.timing.heartbeatWindowMs - ctx.timers.now();
    if (due <= 0) {
      onSilence();
      return;
    }
    await ctx.timers.sleep(due, signal);
  }
}

function asClientError(dialect: EventsDialect | undefined, error: unknown): EventsClientError {
  return error instanceof EventsClientError ? error : fromRequestError(dialect, EVENTS_METHODS.stream, error);
}

export function terminatedError(name: string, reason: EventsClientError): EventsClientError {
  return new EventsClientError(
    "ERR_EVENTS_TERMINATED",
    `the server ended the subscription to ${name} (${reason.code})${serverWords(reason.serverMessage, reason.serverData)}`,
    { serverCode: reason.serverCode, serverMessage: reason.serverMessage, serverData: reason.serverData },
    reason,
  );
}
