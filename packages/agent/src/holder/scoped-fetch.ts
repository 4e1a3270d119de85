/**
 * The fetch the holder client gives the SDK's Streamable HTTP transport.
 *
 * Why: the transport hands one session-wide AbortSignal to every POST, and Node 20's fetch (undici)
 * hangs an `abort` listener on it per request until that request is garbage-collected. A listener
 * that runs for days makes thousands of calls on one session, so the listeners pile up and Node
 * warns MaxListenersExceededWarning (DESIGN.md). Here each request gets a signal of its own, linked
 * to the session's only while that request is in flight (until its body ends, fails or is
 * cancelled), so the session's signal never holds more than the requests that are open.
 */
export type Fetch = (input: string | URL, init?: RequestInit) => Promise<Response>;

export function perRequestSignalFetch(inner: Fetch = (input, init) => fetch(input, init)): Fetch {
  return async (input, init) => {
    const session = init?.signal ?? undefined;
    if (session === undefined || session.aborted) return inner(input, init);

    const own = new AbortController();
    const relay = () => own.abort(session.reason);
    session.addEventListener("abort", relay, { once: true });
    const release = once(() => session.removeEventListener("abort", relay));

    let response: Response;
    try {
      response = await inner(input, { ...init, signal: own.signal });
    } catch (error) {
      release();
      throw error;
    }
    if (response.body === null) {
      release();
      return response;
    }
    return new Response(releasingWhenDone(response.body, release), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

/** The same bytes; `release` runs when the stream ends, errors or is cancelled (SSE streams stay linked while open). */
function releasingWhenDone(
  body: ReadableStream<Uint8Array>,
  release: () => void,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (error) {
        release();
        controller.error(error);
        return;
      }
      if (chunk.done) {
        release();
        controller.close();
      } else {
        controller.enqueue(chunk.value);
      }
    },
    cancel(reason) {
      release();
      return reader.cancel(reason);
    },
  });
}

function once(action: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    action();
  };
}
