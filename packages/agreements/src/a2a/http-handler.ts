import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import {
  A2A_VERSION_HEADER,
  AGENT_CARD_PATH,
  Extensions,
  formatSSEErrorEvent,
  formatSSEEvent,
  HTTP_EXTENSION_HEADER,
} from "@a2a-js/sdk";
import {
  type A2ARequestHandler,
  JsonRpcTransportHandler,
  ServerCallContext,
  validateVersion,
} from "@a2a-js/sdk/server";

/**
 * Mounts an `@a2a-js/sdk` request handler on `node:http` without Express: the agent card at
 * `/.well-known/agent-card.json` and the v1.0 JSON-RPC binding at `rpcPath`, with the SDK's own
 * version check and extension negotiation (reference/a2a.md §2.2).
 */

export interface A2AHttpHandlerOptions {
  readonly requestHandler: A2ARequestHandler;
  /** Default `/a2a/jsonrpc`. */
  readonly rpcPath?: string;
  /** Default 1 MiB. */
  readonly maxBodyBytes?: number;
}

async function readBody(req: IncomingMessage, limit: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(text);
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(",") : value;
}

export function a2aHttpHandler(options: A2AHttpHandlerOptions): RequestListener {
  const transport = new JsonRpcTransportHandler(options.requestHandler);
  const rpcPath = options.rpcPath ?? "/a2a/jsonrpc";
  const limit = options.maxBodyBytes ?? 1024 * 1024;
  return (req, res) => {
    void (async () => {
      const path = new URL(req.url ?? "/", "http://localhost").pathname;
      if (req.method === "GET" && path === `/${AGENT_CARD_PATH}`) {
        sendJson(res, 200, await options.requestHandler.getAgentCard(), { "cache-control": "no-cache" });
        return;
      }
      if (req.method !== "POST" || path !== rpcPath) {
        sendJson(res, 404, { error: "not found" });
        return;
      }
      const body = await readBody(req, limit);
      if (body === undefined) {
        sendJson(res, 413, {
          jsonrpc: "2.0",
          id: null,
          error: { code: -32600, message: "request too large" },
        });
        return;
      }
      let id: unknown = null;
      try {
        const parsed = JSON.parse(body) as { id?: unknown };
        id = parsed.id ?? null;
        const context = new ServerCallContext({
          requestedExtensions: Extensions.parseServiceParameter(header(req, HTTP_EXTENSION_HEADER)),
          requestedVersion: header(req, A2A_VERSION_HEADER),
        });
        validateVersion(context.requestedVersion, await options.requestHandler.getAgentCard(), "JSONRPC");
        const result = await transport.handle(parsed as Record<string, unknown>, context);
        const extraHeaders: Record<string, string> = {};
        if (context.activatedExtensions) {
          extraHeaders[HTTP_EXTENSION_HEADER] = Extensions.toServiceParameter(context.activatedExtensions);
        }
        if (Symbol.asyncIterator in result) {
          res.writeHead(200, {
            "content-type": "text/event-stream",
            "cache-control": "no-cache",
            ...extraHeaders,
          });
          try {
            for await (const event of result) res.write(formatSSEEvent(event));
          } catch (error) {
            res.write(
              formatSSEErrorEvent({
                jsonrpc: "2.0",
                id,
                error: JsonRpcTransportHandler.mapToJSONRPCError(error),
              }),
            );
          }
          res.end();
          return;
        }
        sendJson(res, 200, result, extraHeaders);
      } catch (error) {
        sendJson(res, 200, { jsonrpc: "2.0", id, error: JsonRpcTransportHandler.mapToJSONRPCError(error) });
      }
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  };
}
