/**
 * Poll mode (sketch, "Poll-Based Delivery"): one `events/poll` loop per subscription. A batch with
 * `hasMore` is followed at once; otherwise the loop waits the server's `nextPollSeconds`
 * (SEP-3415 `nextPollMs`), never less than the floor. CursorExpired restarts from now and reports
 * a gap; a dropped connection is retried with backoff from the same cursor.
 */
import type { Client } from "@modelcontextprotocol/client";
import { EVENTS_METHODS } from "../../protocol/methods.js";
import { backoffMs } from "../backoff.js";
import type { DriverContext } from "../context.js";
import { EventsClientError } from "../errors.js";
import { linked } from "../signals.js";
import { call, fromRequestError, isFinal } from "../wire.js";

export async function runPoll(ctx: DriverContext, routeId: string): Promise<void> {
  let failures = 0;
  while (!ctx.signal.aborted) {
    let client: Client | undefined;
    const cursor = ctx.record.cursor;
    try {
      client = await ctx.connection.get();
      const active = client;
      const params = ctx.dialect.poll.params.encode({
        routeId,
        name: ctx.name,
        params: ctx.params,
        cursor,
        ...(ctx.timing.maxEvents === undefined ? {} : { maxEvents: ctx.timing.maxEvents }),
      });
      const result = await linked(ctx.signal, (signal) =>
        call(active, ctx.dialect, EVENTS_METHODS.poll, params, ctx.dialect.poll.result.decode, {
          signal,
          timeout: ctx.timing.requestTimeoutMs,
        }),
      );
      failures = 0;
      if (result.truncated) await ctx.gap("truncated", result.cursor);
      await ctx.deliver(result.events, result.cursor);
      ctx.ready();
      if (result.hasMore) continue;
      await ctx.timers.sleep(Math.max(ctx.timing.pollFloorMs, result.nextPollMs), ctx.signal);
    } catch (caught) {
      if (ctx.signal.aborted) return;
      const error =
        caught instanceof EventsClientError
          ? caught
          : fromRequestError(ctx.dialect, EVENTS_METHODS.poll, caught);
      if (error.code === "ERR_EVENTS_CURSOR_EXPIRED" && cursor !== null) {
        // Sketch, "Cursor Lifecycle": start again from now; what happened meanwhile is a gap.
        await ctx.gap("cursor-expired", null);
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
