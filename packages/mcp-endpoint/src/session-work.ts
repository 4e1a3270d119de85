/**
 * The requests a 2025-11-25 session is still answering. Each holds an admission place until its
 * answer is complete (answered.ts), so nothing a client sends may end that work early or leave it
 * unanswered:
 * - A request whose id is already running in the session is refused. The SDK files answers by id,
 *   so a second one would take over the first one's stream, and the first answer would never end.
 * - A `notifications/cancelled` for a running request is dropped. The SDK would stop waiting for the
 *   tool and never answer, so the POST's stream, and its places, would stay open until the session
 *   ends. A tool call cannot be stopped halfway here: it runs to its answer, which the client then
 *   ignores (the spec lets a receiver ignore a cancellation it cannot act on).
 * - A session asked to close (DELETE, idle, evicted) closes once its requests are answered
 *   (`whenIdle`): closing it earlier would free their places while their tools run on.
 */
import type { RequestId } from "./json-rpc.js";

export interface SessionWork {
  /** The first of these ids that is running already or repeats among them, else undefined. */
  clash(ids: readonly RequestId[]): RequestId | undefined;
  /** Marks the ids running; the returned function ends them (later calls do nothing). */
  begin(ids: readonly RequestId[]): () => void;
  /** The body without the cancellations of running requests; undefined if nothing else was in it. */
  withoutCancellations(body: unknown): unknown;
  /** Whether a request is running. */
  readonly busy: boolean;
  /** Calls `then` once no request is running: now if none is. */
  whenIdle(then: () => void): void;
}

export function createSessionWork(): SessionWork {
  const running = new Set<RequestId>();
  const idle: (() => void)[] = [];

  const cancelsRunning = (message: unknown): boolean => {
    if (typeof message !== "object" || message === null) return false;
    const { method, params } = message as { method?: unknown; params?: { requestId?: unknown } };
    if (method !== "notifications/cancelled") return false;
    const target = params?.requestId;
    return (typeof target === "string" || typeof target === "number") && running.has(target);
  };

  return {
    clash(ids) {
      const seen = new Set<RequestId>();
      for (const id of ids) {
        if (running.has(id) || seen.has(id)) return id;
        seen.add(id);
      }
      return undefined;
    },
    begin(ids) {
      for (const id of ids) running.add(id);
      let ended = false;
      return () => {
        if (ended) return;
        ended = true;
        for (const id of ids) running.delete(id);
        if (running.size === 0) for (const then of idle.splice(0)) then();
      };
    },
    withoutCancellations(body) {
      if (!Array.isArray(body)) return cancelsRunning(body) ? undefined : body;
      const kept = body.filter((message) => !cancelsRunning(message));
      return kept.length === 0 ? undefined : kept;
    },
    get busy() {
      return running.size > 0;
    },
    whenIdle(then) {
      if (running.size === 0) then();
      else idle.push(then);
    },
  };
}
