/**
 * A signal of its own for one request, aborted with `parent`. The SDK adds an `abort` listener to
 * every request's signal and never removes it, so handing it the subscription's long-lived signal
 * would pile up one listener per poll; this link is dropped once the request is done.
 */
export async function linked<T>(parent: AbortSignal, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const own = new AbortController();
  if (parent.aborted) own.abort(parent.reason);
  const relay = () => own.abort(parent.reason);
  parent.addEventListener("abort", relay, { once: true });
  try {
    return await run(own.signal);
  } finally {
    parent.removeEventListener("abort", relay);
  }
}
