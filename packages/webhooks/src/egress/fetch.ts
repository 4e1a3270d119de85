import { fetch as undiciFetch } from "undici";
import { egressAgent } from "./agent.js";
import { categoriseError, type EgressCategory, REASONS } from "./outcome.js";
import type { EgressPolicy } from "./policy.js";
import { checkUrl } from "./url-check.js";

/** The default and the largest body an egress fetch reads: JSON-RPC answers, not downloads. */
export const DEFAULT_EGRESS_FETCH_BYTES = 1024 * 1024;

export interface EgressFetchOptions {
  /** The most bytes an answer's body may have; past it the body errors. Default 1 MB. */
  readonly maxBytes?: number;
}

/** Why an egress fetch did not get an answer: a `TypeError`, as `fetch` rejects, with a category. */
export class EgressFetchError extends TypeError {
  override readonly name = "EgressFetchError";

  constructor(
    readonly category: EgressCategory | "too_large",
    reason: string,
  ) {
    super(reason);
  }
}

const urlOf = (input: string | URL | Request): string =>
  typeof input === "string" ? input : input instanceof URL ? input.href : input.url;

const pairsOf = (headers: Headers): [string, string][] => {
  const pairs: [string, string][] = [];
  headers.forEach((value, name) => {
    pairs.push([name, value]);
  });
  return pairs;
};

/** A request body as undici's fetch takes it: the text or bytes given, or a Request's bytes. */
const bodyOf = async (init: RequestInit | undefined, request: Request | undefined) => {
  const body = init?.body ?? undefined;
  if (body === undefined || body === null)
    return request?.body ? new Uint8Array(await request.arrayBuffer()) : null;
  if (typeof body === "string" || body instanceof Uint8Array) return body;
  return new Uint8Array(await new Response(body).arrayBuffer());
};

/** The body, errored as soon as more than `maxBytes` have come. */
const capped = (body: ReadableStream<Uint8Array>, maxBytes: number): ReadableStream<Uint8Array> => {
  let seen = 0;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > maxBytes) {
          controller.error(
            new EgressFetchError(
              "too_large",
              `the answer is longer than ${maxBytes.toLocaleString("en-US")} bytes`,
            ),
          );
        } else controller.enqueue(chunk);
      },
    }),
  );
};

/**
 * A `fetch` for a client library that calls an address someone else gave us (an A2A peer's
 * JSON-RPC endpoint, named by its card), through the same guard as `postWebhook` and `getJson`:
 * the URL is judged before any socket exists, names resolve only to addresses the policy allows and
 * every socket's remote address is judged again, redirects are refused, never followed, one
 * deadline (`policy.timeoutMs`) covers the exchange, and the body is read up to `maxBytes`. A
 * refusal or a network failure rejects with an `EgressFetchError` whose message is this server's
 * own words.
 */
export const egressFetch = (policy: EgressPolicy, options: EgressFetchOptions = {}): typeof fetch => {
  const maxBytes = options.maxBytes ?? DEFAULT_EGRESS_FETCH_BYTES;
  if (!Number.isInteger(maxBytes) || maxBytes < 1)
    throw new RangeError("maxBytes must be a whole number above 0");
  return async (input, init) => {
    const url = urlOf(input);
    const checked = checkUrl(url, policy);
    if (!checked.ok) throw new EgressFetchError("blocked_url", checked.reason);
    const request = input instanceof Request ? input : undefined;
    const deadline = AbortSignal.timeout(policy.timeoutMs);
    const callerSignal = init?.signal ?? request?.signal;
    const signal = callerSignal ? AbortSignal.any([callerSignal, deadline]) : deadline;
    let answer: Awaited<ReturnType<typeof undiciFetch>>;
    try {
      answer = await undiciFetch(checked.url.href, {
        method: init?.method ?? request?.method ?? "GET",
        // As name/value pairs: undici's own Headers type is not the global one.
        headers: pairsOf(new Headers(init?.headers ?? request?.headers)),
        body: await bodyOf(init, request),
        redirect: "manual",
        signal,
        dispatcher: egressAgent(policy),
      });
    } catch (error) {
      const { category, reason } = categoriseError(error, {
        callerAborted: callerSignal?.aborted === true,
        deadlinePassed: deadline.aborted,
      });
      throw new EgressFetchError(category, reason);
    }
    if (answer.status >= 300 && answer.status < 400) {
      await answer.body?.cancel();
      throw new EgressFetchError("http_3xx", REASONS.http_3xx);
    }
    const length = Number(answer.headers.get("content-length") ?? Number.NaN);
    if (length > maxBytes) {
      await answer.body?.cancel();
      throw new EgressFetchError(
        "too_large",
        `the answer is longer than ${maxBytes.toLocaleString("en-US")} bytes`,
      );
    }
    // A global Response, as callers of `fetch` expect, over the capped body.
    return new Response(answer.body ? capped(answer.body as ReadableStream<Uint8Array>, maxBytes) : null, {
      status: answer.status,
      statusText: answer.statusText,
      headers: answer.headers as unknown as Headers,
    });
  };
};
