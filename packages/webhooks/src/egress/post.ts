import { performance } from "node:perf_hooks";
import { WebhookError } from "../errors.js";
import { guardedRequest } from "./guarded-request.js";
import { outgoingHeaders } from "./headers.js";
import type { EgressCategory } from "./outcome.js";
import type { EgressPolicy } from "./policy.js";
import { parseRetryAfter } from "./retry-after.js";

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

  return guardedRequest<EgressResult>({
    url: input.url,
    policy,
    signal,
    method: "POST",
    headers,
    body: input.body,
    maxBodyBytes: policy.maxResponseBytes,
    onAnswer: ({ status, body, truncated }) => ({
      ok: true,
      status,
      body,
      bodyTruncated: truncated,
      durationMs: elapsed(),
    }),
    onFailure: ({ category, reason, status, headers: answerHeaders }) => {
      if (status === undefined) return fail(category, reason);
      const retryAfterSeconds = parseRetryAfter(answerHeaders?.["retry-after"], policy.now());
      return {
        ok: false,
        category,
        reason,
        status,
        ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
        body: EMPTY,
        bodyTruncated: false,
        durationMs: elapsed(),
      };
    },
  });
};
