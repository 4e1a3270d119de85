/**
 * Whether the client hung up before its request was read in full or answered. Such a request is
 * the client's doing, not a fault of the holder: it is logged as status 499 ("client closed
 * request", nginx's word for it) at info at most and counted apart, never as an error or a 5xx —
 * else anyone could fill the error log and the 5xx rate by opening connections and dropping them.
 */
import type { ServerResponse } from "node:http";
import type { Context } from "hono";

/** The status the access log and the metrics give a request its client abandoned. */
export const CLIENT_CLOSED_REQUEST = 499;

/** What @hono/node-server passes as the app's env: the Node request and response. */
interface NodeEnv {
  outgoing?: ServerResponse;
}

/**
 * True once the connection of this request closed before its answer was written in full. The
 * socket is asked too: it is destroyed a moment before the response hears of it (a body cut off
 * mid-way is first a parse error on the socket).
 */
export function responseAbandoned(res: ServerResponse): boolean {
  if (res.writableFinished) return false;
  return res.destroyed || res.socket === null || res.socket.destroyed;
}

/**
 * True when the client closed the connection before the answer was written: on Node, the
 * response was closed unwritten (the body cut off mid-way closes it too); elsewhere, the
 * request's abort signal fired.
 */
export function clientGone(c: Context): boolean {
  const outgoing = (c.env as NodeEnv | undefined)?.outgoing;
  // On Node the response says it; the signal is not asked there, as asking makes the lazy
  // request start reading a body nobody wants.
  if (outgoing !== undefined) return responseAbandoned(outgoing);
  return c.req.raw.signal?.aborted === true;
}
