/**
 * Poll mode (sketch, "Poll-Based Delivery"): one `events/poll` loop per subscription. A batch with
 * `hasMore` is followed at once; otherwise the loop waits the server's `nextPollSeconds`
 * (SEP-3415 `nextPollMs`), never less than the floor. CursorExpired restarts from now and reports
 * a gap; a dropped connection is retried with backoff from the same cursor.
 */
import type { Client } from "@modelcontextprotocol/client";
import type { EventsDialect } from "../../protocol/dialect.js";
import { EVENTS_METHODS } from "../../protocol/methods.js";
import { backoffMs } from "../backoff.js";
import type { DriverContext } from "../context.js";
import { EventsClientError } from "../errors.js";
import { pollResultCursors } from "../null-cursors.js";
import { linked } from "../signals.js";
import { call, fromRequestError, isFinal } from "../wire.js";

export async function runPoll(ctx: DriverContext, routeId: string): Promise<void> {
  let failures = 0;
  while (!ctx.signal.aborted) {
    let client: Client | undefined;
    let dialect: EventsDialect | undefined;
    const cursor = ctx.record.cursor;
    try {
      client = await ctx.connection.get();
      const active = client;
      const spoken = ctx.dialectOf(active);
      dialect = spoken;
      const params = spoken.poll.params.encode({
        routeId,
        name: ctx.name,
        params: ctx.params,
        cursor,
        ...(ctx.timing.maxEvents === undefined ? {} : { maxEvents: ctx.timing.maxEvents }),
      });
      const result = await linked(ctx.signal, (signal) =>
        call(
          active,
          spoken,
          EVENTS_METHODS.poll,
          params,
          (wire) => spoken.poll.result.decode(pollResultCursors(wire)),
          {
            signal,
            timeout: ctx.timing.requestTimeoutMs,
          },
        ),
      );
      failures = 0;
      if (result.truncated) await ctx.restart("truncated", result.cursor);
      // A null result cursor (no replay position) leaves the last real cursor in place.
      await ctx.deliver(result.events, result.cursor);
      ctx.ready();
      if (result.hasMore) continue;
      await ctx.timers.sleep(Math.max(ctx.timing.pollFloorMs, result.nextPollMs), ctx.signal);
    } catch (caught) {
      if (ctx.signal.aborted) return;
      const error =
        caught instanceof EventsClientError ? caught : fromRequestError(dialect, EVENTS_METHODS.poll, caught);
      if (error.code === "ERR_EVENTS_CURSOR_EXPIRED" && cursor !== null) {
        // Sketch, "Cursor Lifecycle": start again from now; what happened meanwhile is a gap.
        await ctx.restart("cursor-expired", null);
        continue;
      }
      if (!ctx.isReady || isFinal(error)) throw error;
      failures += 1;
      if (error.code === "ERR_EVENTS_UNREACHABLE" && client) ctx.connection.failed(client);
      ctx.notice({
        type: "reconnecting",
        reason: error.code === "ERR_EVENTS_UNREACHABLE" ? "unreachable" : "server-error",
        attempt: failures,
      });
      await ctx.timers.sleep(backoffMs(failures), ctx.signal);
    }
  }
}
