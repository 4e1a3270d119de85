/**
 * When an MCP answer is complete, so the admission places that produced it can be given back.
 *
 * A JSON answer is complete when it exists: the SDK builds it only once every request in the POST
 * has answered. An SSE answer starts with its status long before that (a 2025-11-25 session's POST
 * opens its stream at once, then the tools run); it is complete when the server ends the stream,
 * which it does once the last request in it has answered.
 *
 * A client that goes away does not end the work: the tools run on whatever the client does. So the
 * stream is read to its end and dropped instead of cancelled, the places stay taken until the
 * tools are done, and the SDK never loses track of an answer it still owes.
 */

/** An answer to one HTTP request, and what to call once it is complete. */
export interface Answer {
  response: Response;
  /** Call once the answer is complete (`whenAnswered`): the requests in it are over. */
  done(): void;
}

export function whenAnswered(response: Response, done: () => void): Response {
  const source = response.body;
  if (source === null || !isEventStream(response)) {
    done();
    return response;
  }
  const reader = source.getReader();
  let client: ReadableStreamDefaultController<Uint8Array> | undefined;
  const toClient = (send: (controller: ReadableStreamDefaultController<Uint8Array>) => void) => {
    if (client === undefined) return;
    try {
      send(client);
    } catch {
      client = undefined; // the client's side is closed: the rest is read and dropped
    }
  };
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      client = controller;
    },
    cancel() {
      client = undefined;
    },
  });
  void (async () => {
    try {
      for (;;) {
        const { done: ended, value } = await reader.read();
        if (ended) break;
        toClient((controller) => controller.enqueue(value));
      }
      toClient((controller) => controller.close());
    } catch (error) {
      toClient((controller) => controller.error(error));
    } finally {
      done();
    }
  })();
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

function isEventStream(response: Response): boolean {
  const type = response.headers.get("content-type") ?? "";
  return type.split(";")[0]?.trim().toLowerCase() === "text/event-stream";
}
