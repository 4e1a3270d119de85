/**
 * Admission of one parsed MCP POST, the same in both eras: a place per JSON-RPC request in it
 * (admission.ts), taken before it is served and given back once its answer is complete
 * (answered.ts). Notifications and responses alone run nothing and take no place.
 *
 * A batch takes its places all at once or is refused whole with the same 503 and Retry-After as a
 * single request: half a batch answered would leave the client to sort out which half. A batch
 * with more requests than the process ever serves at once could never be admitted, so it is
 * refused with 400 saying how many fit, rather than with a 503 the client would retry for ever.
 */
import type { Admission } from "./admission.js";
import { type Answer, whenAnswered } from "./answered.js";
import { jsonRpcError, type RequestMessage, requestsIn } from "./json-rpc.js";

/**
 * Requests answered with a stream meant to stay open: `subscriptions/listen` (2026-07-28) and MCP
 * Events' `events/stream`. An open stream costs nothing while it waits, so such a request holds its
 * place only until the stream opens; for the same reason it must come alone, or the batch around
 * it would run without places.
 */
const STREAM_METHODS: ReadonlySet<string> = new Set(["subscriptions/listen", "events/stream"]);

export type PostAdmission =
  | {
      /** Gives the places back (later calls do nothing). */
      release: () => void;
      /** The POST opens a long-lived stream: its place goes back once the stream is open. */
      opensStream: boolean;
    }
  | { refusal: Response };

/** Takes the places a POST body's requests need, waiting in turn; or says why not. */
export async function admitPost(admission: Admission, role: string, body: unknown): Promise<PostAdmission> {
  const messages = requestsIn(body);
  if (messages.length === 0) return { release: () => {}, opensStream: false };
  const impossible = Array.isArray(body) ? batchRefusal(admission, role, messages) : undefined;
  if (impossible !== undefined) return { refusal: impossible };
  const release = await admission.enter(messages.length);
  if (release === undefined) {
    const busy =
      messages.length === 1
        ? `the ${role} is busy; retry in a second`
        : `the ${role} is busy: this batch needs ${messages.length} places at once; retry in a second, or send fewer requests at a time`;
    return { refusal: jsonRpcError(503, -32000, busy, { "retry-after": "1" }) };
  }
  return { release, opensStream: messages.some((message) => STREAM_METHODS.has(message.method)) };
}

/** Why a batch's requests can never be admitted together, or undefined. */
function batchRefusal(
  admission: Admission,
  role: string,
  messages: readonly RequestMessage[],
): Response | undefined {
  const stream = messages.find((message) => STREAM_METHODS.has(message.method));
  if (stream !== undefined) {
    return jsonRpcError(
      400,
      -32600,
      `Invalid Request: ${stream.method} opens a stream and must be sent alone, not in a batch`,
    );
  }
  const most = admission.limits.concurrent;
  if (messages.length <= most) return undefined;
  return jsonRpcError(
    400,
    -32600,
    `Invalid Request: this batch holds ${messages.length} requests, but the ${role} serves at most ${most} at once; send at most ${most} in one batch`,
  );
}

/**
 * Serves an admitted POST with `serve`; its places go back once its answer is complete, or once
 * its stream is open.
 */
export async function serveAdmitted<P extends { request: Request }>(
  admitted: Exclude<PostAdmission, { refusal: Response }>,
  post: P,
  serve: (post: P) => Promise<Answer>,
): Promise<Response> {
  let answer: Answer;
  try {
    answer = await serve(admitted.opensStream ? post : { ...post, request: detached(post.request) });
  } catch (error) {
    admitted.release();
    throw error;
  }
  const finished = () => {
    answer.done();
    admitted.release();
  };
  if (!admitted.opensStream) return whenAnswered(answer.response, finished);
  finished();
  return answer.response;
}

/**
 * The request as the SDK sees it once admitted: without the client's abort signal. The work runs
 * to its answer whatever the client does (answered.ts), so a client leaving must not make the SDK
 * drop that answer, or the place would come back while the tool still runs. A stream keeps the
 * signal: it ends when its client leaves.
 */
function detached(request: Request): Request {
  return new Request(request.url, { method: request.method, headers: request.headers });
}
