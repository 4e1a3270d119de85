import { performance } from "node:perf_hooks";
import { WebhookError } from "../errors.js";
import { guardedRequest } from "./guarded-request.js";
import { type EgressCategory, REASONS } from "./outcome.js";
import type { EgressPolicy } from "./policy.js";

/** The default and the largest body a GET may read: a key page, a descriptor, a small document. */
export const DEFAULT_GET_JSON_BYTES = 64 * 1024;
export const MAX_GET_JSON_BYTES = 1024 * 1024;

export interface GetJsonInput {
  readonly url: string | URL;
  readonly policy: EgressPolicy;
  /** The most bytes the answer may have; a longer one is `too_large`. Default 64 KB, at most 1 MB. */
  readonly maxBytes?: number;
  readonly signal?: AbortSignal;
}

export interface GetJsonSuccess {
  readonly ok: true;
  readonly status: number;
  /** The exact bytes of the body, for a caller that parses more strictly than JSON.parse. */
  readonly body: Uint8Array;
  readonly json: unknown;
  /** The answer's Cache-Control header, for a caller that caches. */
  readonly cacheControl?: string;
  readonly durationMs: number;
}

export interface GetJsonFailure {
  readonly ok: false;
  readonly category: EgressCategory | "too_large" | "not_json";
  /** Plain words written by this server; never text from the endpoint. */
  readonly reason: string;
  readonly status?: number;
  readonly durationMs: number;
}

export type GetJsonResult = GetJsonSuccess | GetJsonFailure;

const JSON_TYPE = /^application\/([a-z0-9.+-]+\+)?json\s*(;|$)/i;
const isJson = (contentType: string | string[] | undefined): boolean =>
  typeof contentType === "string" && JSON_TYPE.test(contentType);

/** The declared Content-Length, when there is exactly one that is a number. */
const declaredLength = (value: string | string[] | undefined): number | undefined =>
  typeof value === "string" && /^\d+$/.test(value.trim()) ? Number(value.trim()) : undefined;

/**
 * Fetches one JSON document under a policy through the same guarded connector as `postWebhook`:
 * the URL and every address it reaches are judged, one deadline covers everything, redirects are
 * reported as `http_3xx` and never followed, the body is read up to `maxBytes` and must be JSON.
 * Sends only `accept: application/json`: no cookie or credential. Never throws for anything the
 * network or the server does.
 */
export const getJson = async (input: GetJsonInput): Promise<GetJsonResult> => {
  const started = performance.now();
  const { policy, signal } = input;
  const maxBytes = input.maxBytes ?? DEFAULT_GET_JSON_BYTES;
  if (!Number.isInteger(maxBytes) || maxBytes < 1 || maxBytes > MAX_GET_JSON_BYTES) {
    throw new WebhookError(
      "ERR_EGRESS_POLICY",
      `maxBytes must be a whole number from 1 to ${MAX_GET_JSON_BYTES}`,
    );
  }
  const elapsed = () => Math.round(performance.now() - started);
  const fail = (category: GetJsonFailure["category"], reason: string, status?: number): GetJsonFailure => ({
    ok: false,
    category,
    reason,
    ...(status === undefined ? {} : { status }),
    durationMs: elapsed(),
  });

  return guardedRequest<GetJsonResult>({
    url: input.url,
    policy,
    signal,
    method: "GET",
    headers: { accept: "application/json" },
    // One byte more than allowed tells a body of exactly maxBytes from a longer one.
    maxBodyBytes: maxBytes + 1,
    // A body declared longer than the cap is refused from the headers: neither read nor waited for.
    wantBody: (_status, headers) =>
      isJson(headers["content-type"]) && (declaredLength(headers["content-length"]) ?? 0) <= maxBytes,
    onAnswer: ({ status, headers, body: bytes, truncated, deadlinePassed }) => {
      if (!isJson(headers["content-type"])) {
        return fail("not_json", "the answer is not marked as JSON (content-type)", status);
      }
      const declared = declaredLength(headers["content-length"]);
      if (declared !== undefined && declared > maxBytes) {
        return fail("too_large", `the answer declares ${declared} bytes, more than ${maxBytes}`, status);
      }
      if (deadlinePassed) return fail("timeout", REASONS.timeout, status);
      if (truncated || bytes.byteLength > maxBytes) {
        return fail("too_large", `the answer is longer than ${maxBytes} bytes or broke off`, status);
      }
      let json: unknown;
      try {
        json = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
      } catch {
        return fail("not_json", "the answer is not valid JSON in UTF-8", status);
      }
      const cacheControl = headers["cache-control"];
      return {
        ok: true,
        status,
        body: bytes,
        json,
        ...(typeof cacheControl === "string" ? { cacheControl } : {}),
        durationMs: elapsed(),
      };
    },
    onFailure: ({ category, reason, status }) => fail(category, reason, status),
  });
};
