/**
 * A `fetch` for the SDK's `StreamableHTTPClientTransport` that does not pile up abort listeners on a
 * long-lived session.
 *
 * The cause (DESIGN.md's caveat): the transport passes one session-wide `AbortSignal` to every POST,
 * and Node 20's fetch (undici) adds an `abort` listener to the caller's signal for each request,
 * removing it only when the request object is garbage-collected. Between collections the listeners
 * accumulate, and at 1,500 Node warns `MaxListenersExceededWarning` (undici raises the limit to 1,500
 * itself, hence the count). Fixed upstream in undici (nodejs/undici#5318) but not in Node 20's copy.
 *
 * The guard gives each request its own short-lived signal, aborted when the session's signal aborts,
 * and removes that one link as soon as the request is over: when fetch fails, when the response has
 * no body, or when its body is read to the end, fails or is cancelled. An SSE body stays linked for
 * as long as it is open, so closing the session still ends it.
 *
 *     new StreamableHTTPClientTransport(url, { fetch: scopedSignalFetch() })
 */
export type FetchLike = (input: string | URL, init?: RequestInit) => Promise<Response>;

export function scopedSignalFetch(base: FetchLike = (input, init) => fetch(input, init)): FetchLike {
  return async (input, init) => {
    const outer = init?.signal;
    if (outer === undefined || outer === null) return base(input, init);
    if (outer.aborted) return base(input, init);
    const local = new AbortController();
    const forward = () => local.abort(outer.reason);
    outer.addEventListener("abort", forward, { once: true });
    let linked = true;
    const unlink = () => {
      if (linked) {
        linked = false;
        outer.removeEventListener("abort", forward);
      }
    };
    let response: Response;
    try {
      response = await base(input, { ...init, signal: local.signal });
    } catch (error) {
      unlink();
      throw error;
    }
    if (response.body === null) {
      unlink();
      return response;
    }
    const reader = response.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (done) {
            unlink();
            controller.close();
          } else {
            controller.enqueue(value);
          }
        } catch (error) {
          unlink();
          controller.error(error);
        }
      },
      cancel(reason) {
        unlink();
        return reader.cancel(reason);
      },
    });
    return new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}
