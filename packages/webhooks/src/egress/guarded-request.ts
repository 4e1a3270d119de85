import { type Dispatcher, request } from "undici";
import { egressAgent } from "./agent.js";
import { categoriseError, categoryOfStatus, type EgressCategory, REASONS } from "./outcome.js";
import type { EgressPolicy } from "./policy.js";
import { checkUrl } from "./url-check.js";

/** Why the request did not reach a 2xx answer. Plain words written by this server only. */
export interface GuardedFailure {
  readonly category: EgressCategory;
  readonly reason: string;
  /** The status of a non-2xx answer, whose body was not read. */
  readonly status?: number;
  /** The headers of that non-2xx answer. */
  readonly headers?: Dispatcher.ResponseData["headers"];
}

/** A 2xx answer whose body the caller reads, under the deadline still running. */
export interface GuardedAnswer {
  readonly status: number;
  readonly headers: Dispatcher.ResponseData["headers"];
  readonly body: Dispatcher.ResponseData["body"];
  /** True once the deadline has passed (a capped read then ends early). */
  readonly deadlinePassed: () => boolean;
}

export interface GuardedRequest<T> {
  readonly url: string | URL;
  readonly policy: EgressPolicy;
  readonly signal?: AbortSignal | undefined;
  readonly method: "GET" | "POST";
  readonly headers: Record<string, string>;
  readonly body?: Uint8Array;
  /** The words of the TimeoutError the deadline aborts with. */
  readonly deadlineMessage: string;
  readonly onAnswer: (answer: GuardedAnswer) => Promise<T>;
  readonly onFailure: (failure: GuardedFailure) => T;
}

/**
 * The plumbing postWebhook and getJson share: the URL is judged before any socket exists, the
 * request goes through the policy's guarded dispatcher, one deadline covers everything
 * (resolving, connecting, TLS, headers and the caller's body read in `onAnswer`), a non-2xx
 * answer's body is never read, and every network error becomes a category. Our own controller,
 * timer and listener are released in `finally`, so a long-lived caller signal does not collect
 * a listener (or AbortSignal.any bookkeeping) per request.
 */
export const guardedRequest = async <T>(input: GuardedRequest<T>): Promise<T> => {
  const { policy, signal, onFailure } = input;
  const checked = checkUrl(input.url, policy);
  if (!checked.ok) return onFailure({ category: "blocked_url", reason: checked.reason });
  if (signal?.aborted) return onFailure({ category: "aborted", reason: REASONS.aborted });

  const controller = new AbortController();
  let deadlinePassed = false;
  const timer = setTimeout(() => {
    deadlinePassed = true;
    controller.abort(new DOMException(input.deadlineMessage, "TimeoutError"));
  }, policy.timeoutMs);
  const onCallerAbort = () => controller.abort(signal?.reason);
  signal?.addEventListener("abort", onCallerAbort, { once: true });
  try {
    const response = await request(checked.url, {
      method: input.method,
      headers: input.headers,
      ...(input.body === undefined ? {} : { body: input.body }),
      dispatcher: egressAgent(policy),
      signal: controller.signal,
    });
    // Stopping early raises an abort error on the stream; that is the point, not a failure.
    response.body.on("error", () => {});
    const status = response.statusCode;
    const category = categoryOfStatus(status);
    if (category !== undefined) {
      // The body of a failure is never read: destroying it closes the connection.
      response.body.destroy();
      return onFailure({ category, reason: REASONS[category], status, headers: response.headers });
    }
    return await input.onAnswer({
      status,
      headers: response.headers,
      body: response.body,
      deadlinePassed: () => deadlinePassed,
    });
  } catch (error) {
    return onFailure(categoriseError(error, { callerAborted: signal?.aborted === true, deadlinePassed }));
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onCallerAbort);
  }
};
