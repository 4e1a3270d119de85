/**
 * JSON-RPC answers given before the SDK's transport sees a request: errors outside any session,
 * the bounded UTF-8 JSON body read, and the params check the SDK would answer with -32603.
 */
import { ClientRequestSchema } from "@modelcontextprotocol/core";

/** A JSON-RPC error outside any session (the transport answers in the same shape inside one). */
export function jsonRpcError(
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

export type BodyRead = { ok: true; value: unknown } | { ok: false; response: Response };

/** The body as JSON, or the error to answer: 413 past `maxBytes` (read no further), 400 if not UTF-8 JSON. */
export async function readJsonBody(request: Request, maxBytes: number): Promise<BodyRead> {
  const tooLarge = (): BodyRead => ({
    ok: false,
    response: jsonRpcError(413, -32000, `the request body is larger than ${maxBytes} bytes`),
  });
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > maxBytes) return tooLarge();
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (request.body !== null) {
    const reader = request.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel().catch(() => {});
        return tooLarge();
      }
      chunks.push(value);
    }
  }
  try {
    const text = new TextDecoder("utf-8", { fatal: true }).decode(Buffer.concat(chunks));
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false, response: jsonRpcError(400, -32700, "Parse error: the body is not UTF-8 JSON") };
  }
}

/** The SDK's schema of each client request method, to check params before the SDK does. */
const REQUEST_SCHEMAS = new Map(
  ClientRequestSchema.options.map((schema) => [schema.shape.method.value, schema]),
);

/**
 * Why a request's params are invalid, or undefined. The SDK answers such a request with -32603
 * (internal error) and the validator's dump; JSON-RPC calls it -32602 (invalid params), and says so
 * here in a line. Unknown methods are left to the SDK (-32601).
 */
export function invalidParams(message: unknown): string | undefined {
  if (typeof message !== "object" || message === null || Array.isArray(message)) return undefined;
  const { method, id } = message as { method?: unknown; id?: unknown };
  if (typeof method !== "string" || id === undefined) return undefined;
  const schema = REQUEST_SCHEMAS.get(method as never);
  if (schema === undefined) return undefined;
  const checked = schema.safeParse(message);
  if (checked.success) return undefined;
  const issues = checked.error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.map(String).join(".") || "params"}: ${issue.message}`);
  return `Invalid params for ${method}: ${issues.join("; ")}`;
}

/** The -32602 answer for a body (one message or a batch) with invalid params, or undefined. */
export function paramsError(body: unknown): Response | undefined {
  const messages = Array.isArray(body) ? body : [body];
  for (const message of messages) {
    const problem = invalidParams(message);
    if (problem === undefined) continue;
    if (Array.isArray(body)) return jsonRpcError(400, -32602, problem);
    const id = (message as { id: unknown }).id;
    return new Response(JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32602, message: problem } }), {
      status: 200,
      headers: { "content-type": "application/json" },
    });
  }
  return undefined;
}

export type RequestId = string | number;

/** One JSON-RPC request in a POST body: a message with a method and an id, which will be answered. */
export interface RequestMessage {
  id: RequestId;
  method: string;
}

/**
 * The requests in a POST body, one message or a batch. Notifications and responses are not
 * requests: nothing answers them, so they run no work worth a place.
 */
export function requestsIn(body: unknown): RequestMessage[] {
  const messages: unknown[] = Array.isArray(body) ? body : [body];
  const requests: RequestMessage[] = [];
  for (const message of messages) {
    if (typeof message !== "object" || message === null) continue;
    const { id, method } = message as { id?: unknown; method?: unknown };
    if (typeof method === "string" && (typeof id === "string" || typeof id === "number")) {
      requests.push({ id, method });
    }
  }
  return requests;
}
