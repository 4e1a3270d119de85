import { performance } from "node:perf_hooks";
import { request } from "undici";
import { WebhookError } from "../errors.js";
import { egressAgent } from "./agent.js";
import { outgoingHeaders } from "./headers.js";
import { categoriseError, categoryOfStatus, type EgressCategory, REASONS } from "./outcome.js";
import type { EgressPolicy } from "./policy.js";
import { readCapped } from "./read-capped.js";
import { parseRetryAfter } from "./retry-after.js";
import { checkUrl } from "./url-check.js";

export interface PostWebhookInput {
  readonly url: string | URL;
  /** Sent as given (names are lower-cased); `content-type` defaults to application/json. */
  readonly headers?: Readonly<Record<string, string>>;
  /** The exact bytes that were signed. */
  readonly body: Uint8Array;
  readonly policy: EgressPolicy;
  /** Cancels the delivery; reported as `aborted`. The policy's deadline applies regardless. */
  readonly signal?: AbortSignal;
}

interface ResultCommon {
  /** The start of the answer's body, at most `policy.maxResponseBytes`; empty unless 2xx. */
  readonly body: Uint8Array;
  /** True when the body was longer than the cap or broke off. */
  readonly bodyTruncated: boolean;
  readonly durationMs: number;
  readonly status?: number;
  /** From a Retry-After header on a non-2xx answer, in seconds from now. */
  readonly retryAfterSeconds?: number;
}

export interface EgressSuccess extends ResultCommon {
  readonly ok: true;
  readonly status: number;
}

export interface EgressFailure extends ResultCommon {
  readonly ok: false;
  readonly category: EgressCategory;
  /** Plain words written by this server; never text from the endpoint. */
  readonly reason: string;
}

export type EgressResult = EgressSuccess | EgressFailure;

const EMPTY = new Uint8Array(0);

/**
 * Posts one webhook under a policy and reports the outcome. Never throws for anything the
 * network or the endpoint does; throws a WebhookError only for a caller's mistake (a body that
 * is not bytes, a reserved header). Redirects are reported as `http_3xx`, never followed.
 */
export const postWebhook = async (input: PostWebhookInput): Promise<EgressResult> => {
  const started = performance.now();
  const { policy, signal } = input;
  if (!(input.body instanceof Uint8Array)) {
    throw new WebhookError("ERR_EGRESS_POLICY", "the body must be a Uint8Array");
  }
  const headers = outgoingHeaders(input.headers);
  const elapsed = () => Math.round(performance.now() - started);

  const fail = (category: EgressCategory, reason: string): EgressFailure => ({
    ok: false,
    category,
    reason,
    body: EMPTY,
    bodyTruncated: false,
    durationMs: elapsed(),
  });

  // Refused before any socket exists: scheme, port, userinfo, own hosts, IP literals.
  const checked = checkUrl(input.url, policy);
  if (!checked.ok) return fail("blocked_url", checked.reason);
  if (signal?.aborted) return fail("aborted", REASONS.aborted);

  // One deadline for everything: resolving, connecting, TLS, headers and the capped body.
  // Our own controller, timer and listener are released in `finally`, so a long-lived caller
  // signal does not collect a listener (or AbortSignal.any bookkeeping) per delivery.
  const controller = new AbortController();
  let deadlinePassed = false;
  const timer = setTimeout(() => {
    deadlinePassed = true;
    controller.abort(new DOMException("the delivery deadline passed", "TimeoutError"));
  }, policy.timeoutMs);
  const onCallerAbort = () => controller.abort(signal?.reason);
  signal?.addEventListener("abort", onCallerAbort, { once: true });
  try {
    const response = await request(checked.url, {
      method: "POST",
      headers,
      body: input.body,
      dispatcher: egressAgent(policy),
      signal: controller.signal,
    });
    // Stopping early raises an abort error on the stream; that is the point, not a failure.
    response.body.on("error", () => {});
    const status = response.statusCode;
    const category = categoryOfStatus(status);
    if (category === undefined) {
      const { bytes, truncated } = await readCapped(response.body, policy.maxResponseBytes);
      return { ok: true, status, body: bytes, bodyTruncated: truncated, durationMs: elapsed() };
    }
    // The body of a failure is never read: destroying it closes the connection.
    response.body.destroy();
    const retryAfterSeconds = parseRetryAfter(response.headers["retry-after"], policy.now());
    return {
      ok: false,
      category,
      reason: REASONS[category],
      status,
      ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
      body: EMPTY,
      bodyTruncated: false,
      durationMs: elapsed(),
    };
  } catch (error) {
    const outcome = categoriseError(error, { callerAborted: signal?.aborted === true, deadlinePassed });
    return fail(outcome.category, outcome.reason);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onCallerAbort);
  }
};
