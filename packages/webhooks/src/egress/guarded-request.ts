import type { Dispatcher } from "undici";
import { egressAgent } from "./agent.js";
import { categoriseError, categoryOfStatus, type EgressCategory, REASONS } from "./outcome.js";
import type { EgressPolicy } from "./policy.js";
import { checkUrl } from "./url-check.js";

type Headers = Dispatcher.ResponseData["headers"];

/** Why the request did not reach a 2xx answer. Plain words written by this server only. */
export interface GuardedFailure {
  readonly category: EgressCategory;
  readonly reason: string;
  /** The status of a non-2xx answer, whose body was not read. */
  readonly status?: number;
  /** The headers of that non-2xx answer. */
  readonly headers?: Headers;
}

/** A 2xx answer and the start of its body, read under the same deadline. */
export interface GuardedAnswer {
  readonly status: number;
  readonly headers: Headers;
  /** At most `maxBodyBytes` bytes; empty when `wantBody` declined the body. */
  readonly body: Uint8Array;
  /** True when the body was longer than the cap or broke off (the deadline, a reset). */
  readonly truncated: boolean;
  /** True when the deadline passed while the body was read. */
  readonly deadlinePassed: boolean;
}

export interface GuardedRequest<T> {
  readonly url: string | URL;
  readonly policy: EgressPolicy;
  readonly signal?: AbortSignal | undefined;
  readonly method: "GET" | "POST";
  readonly headers: Record<string, string>;
  readonly body?: Uint8Array;
  /** The most bytes of a 2xx body kept; past it the connection is closed, not read on. */
  readonly maxBodyBytes: number;
  /** Whether a 2xx answer's body is read at all; when not, the connection is closed at once. */
  readonly wantBody?: (status: number, headers: Headers) => boolean;
  readonly onAnswer: (answer: GuardedAnswer) => T;
  readonly onFailure: (failure: GuardedFailure) => T;
}

/** Where a checked URL goes, as undici's dispatch takes it. */
type Target =
  | { readonly ok: true; readonly origin: string; readonly path: string }
  | { readonly ok: false; readonly reason: string };

/** URL verdicts kept per policy. A verdict depends only on the URL text and the (frozen) policy. */
const TARGET_CACHE_SIZE = 1024;
const targets = new WeakMap<EgressPolicy, Map<string, Target>>();

/**
 * The URL judged before any socket exists (`checkUrl`), remembered per frozen policy so that a
 * worker posting to the same endpoint again and again does not parse and judge it every time.
 * The address a connection reaches is still judged on every connection by the connector.
 */
const targetOf = (input: string | URL, policy: EgressPolicy): Target => {
  const text = typeof input === "string" ? input : input.href;
  const cacheable = Object.isFrozen(policy);
  let cache = cacheable ? targets.get(policy) : undefined;
  const known = cache?.get(text);
  if (known) return known;
  const checked = checkUrl(text, policy);
  const target: Target = checked.ok
    ? { ok: true, origin: checked.url.origin, path: `${checked.url.pathname}${checked.url.search}` }
    : { ok: false, reason: checked.reason };
  if (cacheable) {
    if (!cache) {
      cache = new Map();
      targets.set(policy, cache);
    }
    if (cache.size >= TARGET_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
    cache.set(text, target);
  }
  return target;
};

/** Stops a request whose answer we do not read; undici closes the connection. */
const hangup = (why: string): Error => new Error(why);

/**
 * The plumbing postWebhook and getJson share: the URL is judged before any socket exists, the
 * request goes through the policy's guarded dispatcher, one deadline covers everything
 * (resolving, connecting, TLS, headers and the body), a non-2xx answer's body is never read, a
 * 2xx body is read up to the cap and no further, and every network error becomes a category.
 *
 * It dispatches with its own handler instead of undici's `request`: no response stream, no
 * AbortSignal and no async resource per request, which on a busy worker cost more than the
 * request itself. The timer and the caller-signal listener are released when it settles, so a
 * long-lived caller signal does not collect a listener per request.
 */
export const guardedRequest = <T>(input: GuardedRequest<T>): Promise<T> => {
  const { policy, signal, onFailure } = input;
  const target = targetOf(input.url, policy);
  if (!target.ok) return Promise.resolve(onFailure({ category: "blocked_url", reason: target.reason }));
  if (signal?.aborted) return Promise.resolve(onFailure({ category: "aborted", reason: REASONS.aborted }));

  return new Promise<T>((resolve, reject) => {
    let controller: Dispatcher.DispatchController | undefined;
    let settled = false;
    let deadlinePassed = false;
    let stopReason: Error | undefined;
    // Set once a 2xx answer's headers arrived: from then on the result is an answer.
    let answer: { status: number; headers: Headers } | undefined;
    const chunks: Buffer[] = [];
    let length = 0;
    let truncated = false;

    const settle = (value: () => T) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", onCallerAbort);
      // Runs inside undici's callbacks: a throwing caller must reach the caller, not undici.
      try {
        resolve(value());
      } catch (error) {
        reject(error);
      }
    };
    const settleAnswer = () =>
      settle(() => {
        const { status, headers } = answer as { status: number; headers: Headers };
        const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, length);
        return input.onAnswer({ status, headers, body, truncated, deadlinePassed });
      });
    // Stops the exchange: at once when it is on a socket, else as soon as undici hands it one.
    const stop = (reason: Error) => {
      stopReason ??= reason;
      controller?.abort(reason);
    };
    const failWith = (error: unknown) => {
      if (answer) {
        // A body that breaks off keeps what arrived; the 2xx verdict stands.
        truncated = true;
        settleAnswer();
        return;
      }
      settle(() =>
        onFailure(categoriseError(error, { callerAborted: signal?.aborted === true, deadlinePassed })),
      );
    };

    const timer = setTimeout(() => {
      deadlinePassed = true;
      const reason = new DOMException("the deadline passed", "TimeoutError");
      failWith(reason);
      stop(reason);
    }, policy.timeoutMs);
    const onCallerAbort = () => {
      const reason = signal?.reason instanceof Error ? signal.reason : hangup("aborted by the caller");
      failWith(reason);
      stop(reason);
    };
    signal?.addEventListener("abort", onCallerAbort, { once: true });

    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(started) {
        controller = started;
        if (stopReason) started.abort(stopReason);
      },
      onResponseStart(_controller, status, headers) {
        if (settled || status < 200) return; // 1xx: informational, the answer follows
        const category = categoryOfStatus(status);
        if (category !== undefined) {
          // The body of a failure is never read: stopping closes the connection.
          settle(() => onFailure({ category, reason: REASONS[category], status, headers }));
          stop(hangup("a failure's body is not read"));
          return;
        }
        answer = { status, headers };
        if (input.wantBody && !input.wantBody(status, headers)) {
          settleAnswer();
          stop(hangup("the body is not wanted"));
        }
      },
      onResponseData(_controller, chunk) {
        if (settled) return;
        const room = input.maxBodyBytes - length;
        if (chunk.byteLength > room) {
          // Keep what fits, then hang up rather than download the rest.
          if (room > 0) chunks.push(chunk.subarray(0, room));
          length += Math.max(0, room);
          truncated = true;
          settleAnswer();
          stop(hangup("the body is longer than the cap"));
          return;
        }
        chunks.push(chunk);
        length += chunk.byteLength;
      },
      onResponseEnd() {
        if (answer) settleAnswer();
        else failWith(new Error("the exchange ended without an answer"));
      },
      onResponseError(_controller, error) {
        failWith(error);
      },
    };

    egressAgent(policy).dispatch(
      {
        origin: target.origin,
        path: target.path,
        method: input.method,
        headers: input.headers,
        ...(input.body === undefined ? {} : { body: input.body }),
      },
      handler,
    );
  });
};
