import type { RequestId } from "../protocol/index.js";

const encoder = new TextEncoder();

/**
 * An `events/stream` request's notifications written straight into its HTTP response: JSON-RPC
 * messages serialised once by the caller, framed as the SDK frames them (`event: message`), and
 * coalesced per tick into one chunk. The SDK still validates and dispatches the request and writes
 * its final result; this only spares each notification the SDK's per-message round trip (schema
 * checks, a promise chain, one stream chunk each), which dominated a fan-out to many streams.
 */
export class FrameSink {
  private pending: string[] = [];
  private controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  private scheduled = false;
  private closed = false;

  /** Queues one JSON-RPC message (its JSON text); nothing once the response ended. */
  write(json: string): void {
    if (this.closed) return;
    this.pending.push(`event: message\ndata: ${json}\n\n`);
    if (this.controller === undefined || this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  /**
   * The SDK's SSE response with this sink's frames in it. Everything written before a chunk of the
   * SDK's (its final result) goes out before that chunk.
   */
  wrap(response: Response, onEnd: (cancelled: boolean) => void): Response {
    this.onEnd = onEnd;
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.controller = controller;
        this.flush();
      },
      pull: async (controller) => {
        try {
          const { value, done } = await reader.read();
          this.flush();
          if (done) {
            this.close();
            controller.close();
          } else controller.enqueue(value);
        } catch (error) {
          this.close();
          controller.error(error);
        }
      },
      cancel: (reason) => {
        this.close(true);
        return reader.cancel(reason);
      },
    });
    return new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  }

  /** The response ended (or never was an SSE stream): later writes are dropped. */
  close(cancelled = false): void {
    if (this.closed) return;
    this.closed = true;
    this.pending = [];
    this.onEnd?.(cancelled);
  }

  private onEnd: ((cancelled: boolean) => void) | undefined;

  private flush(): void {
    if (this.closed || this.controller === undefined || this.pending.length === 0) return;
    const text = this.pending.length === 1 ? (this.pending[0] as string) : this.pending.join("");
    this.pending = [];
    this.controller.enqueue(encoder.encode(text));
  }
}

/**
 * The sinks of `events/stream` requests whose HTTP response the extension wraps, by (session,
 * request id): JSON-RPC ids are unique among a session's outstanding requests. Opened before the
 * transport dispatches the request, claimed by the stream handler, dropped when the response ends.
 */
export class OwnedStreams {
  private readonly sinks = new Map<string, FrameSink>();

  open(sessionId: string, requestId: RequestId): FrameSink {
    const sink = new FrameSink();
    this.sinks.set(key(sessionId, requestId), sink);
    return sink;
  }

  /** The sink of this request, if its response is wrapped; it is the caller's from now on. */
  claim(sessionId: string | undefined, requestId: RequestId): FrameSink | undefined {
    if (sessionId === undefined) return undefined;
    const k = key(sessionId, requestId);
    const sink = this.sinks.get(k);
    this.sinks.delete(k);
    return sink;
  }

  /**
   * Hands the transport's answer back: an SSE response carries the sink's frames; anything else
   * (refused before the handler ran, a JSON answer) drops the sink. `onCancel`: the client stopped
   * reading the response (its stream is over).
   */
  attach(
    sessionId: string,
    requestId: RequestId,
    sink: FrameSink,
    response: Response,
    onCancel: () => void,
  ): Response {
    const release = (cancelled: boolean) => {
      const k = key(sessionId, requestId);
      if (this.sinks.get(k) === sink) this.sinks.delete(k);
      if (cancelled) onCancel();
    };
    if (!(response.headers.get("content-type") ?? "").includes("text/event-stream") || !response.body) {
      release(false);
      sink.close();
      return response;
    }
    return sink.wrap(response, release);
  }

  /** The transport threw: nothing will carry the sink. */
  drop(sessionId: string, requestId: RequestId, sink: FrameSink): void {
    const k = key(sessionId, requestId);
    if (this.sinks.get(k) === sink) this.sinks.delete(k);
    sink.close();
  }
}

function key(sessionId: string, requestId: RequestId): string {
  return `${sessionId}\u0000${typeof requestId}:${requestId}`;
}

/** Each events server's sinks (kept off its public interface). */
export const ownedStreamsOf = new WeakMap<object, OwnedStreams>();
