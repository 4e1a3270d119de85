import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import {
  A2A_VERSION_HEADER,
  AGENT_CARD_PATH,
  Extensions,
  formatSSEErrorEvent,
  formatSSEEvent,
  HTTP_EXTENSION_HEADER,
} from "@a2a-js/sdk";
import { isLegacyJsonRpcMethod, LEGACY_HTTP_EXTENSION_HEADER } from "@a2a-js/sdk/compat/v0_3";
import { LegacyJsonRpcTransportHandler } from "@a2a-js/sdk/compat/v0_3/server";
import {
  type A2ARequestHandler,
  JsonRpcTransportHandler,
  ServerCallContext,
  validateVersion,
} from "@a2a-js/sdk/server";
import { legacyAgentCard } from "./agreement-card.js";

/**
 * Mounts an `@a2a-js/sdk` request handler on `node:http` without Express: the agent card at
 * `/.well-known/agent-card.json` and JSON-RPC at `rpcPath`, with the SDK's own version check and
 * extension negotiation (reference/a2a.md §2.2). One endpoint speaks both versions: a request
 * whose method is a v0.3 name (`message/send`, `tasks/get`, `tasks/cancel`, …) goes through the
 * SDK's v0.3 compatibility handler, anything else through v1.0. The card is served in the v0.3
 * shape to a client that names no version or a 0.x one, as v0.3 clients do.
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

const hasLegacyInterface = (card: { supportedInterfaces: readonly { protocolVersion: string }[] }) =>
  card.supportedInterfaces.some((i) => i.protocolVersion.startsWith("0.3"));

const mapError = (legacy: boolean, error: unknown) =>
  legacy
    ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError(error)
    : JsonRpcTransportHandler.mapToJSONRPCError(error);

export function a2aHttpHandler(options: A2AHttpHandlerOptions): RequestListener {
  const transport = new JsonRpcTransportHandler(options.requestHandler);
  const legacyTransport = new LegacyJsonRpcTransportHandler(options.requestHandler);
  const rpcPath = options.rpcPath ?? "/a2a/jsonrpc";
  const limit = options.maxBodyBytes ?? 1024 * 1024;
  return (req, res) => {
    void (async () => {
      const path = new URL(req.url ?? "/", "http://localhost").pathname;
      if (req.method === "GET" && path === `/${AGENT_CARD_PATH}`) {
        const card = await options.requestHandler.getAgentCard();
        const asked = header(req, A2A_VERSION_HEADER) ?? "";
        const legacy = (asked === "" || asked.startsWith("0.")) && hasLegacyInterface(card);
        sendJson(res, 200, legacy ? legacyAgentCard(card) : card, {
          "cache-control": "no-cache",
          vary: A2A_VERSION_HEADER,
        });
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
      let legacy = false;
      try {
        const parsed = JSON.parse(body) as { id?: unknown; method?: unknown };
        id = parsed.id ?? null;
        legacy = isLegacyJsonRpcMethod(parsed.method);
        // v0.3 clients name their extensions in X-A2A-Extensions; accept either spelling.
        const extensions = legacy
          ? (header(req, LEGACY_HTTP_EXTENSION_HEADER) ?? header(req, HTTP_EXTENSION_HEADER))
          : header(req, HTTP_EXTENSION_HEADER);
        const context = new ServerCallContext({
          requestedExtensions: Extensions.parseServiceParameter(extensions),
          requestedVersion: header(req, A2A_VERSION_HEADER) || (legacy ? "0.3" : undefined),
        });
        validateVersion(context.requestedVersion, await options.requestHandler.getAgentCard(), "JSONRPC");
        const result = legacy
          ? await legacyTransport.handle(parsed as Record<string, unknown>, context)
          : await transport.handle(parsed as Record<string, unknown>, context);
        const extraHeaders: Record<string, string> = {};
        if (context.activatedExtensions) {
          extraHeaders[legacy ? LEGACY_HTTP_EXTENSION_HEADER : HTTP_EXTENSION_HEADER] =
            Extensions.toServiceParameter(context.activatedExtensions);
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
                error: mapError(legacy, error),
              }),
            );
          }
          res.end();
          return;
        }
        sendJson(res, 200, result, extraHeaders);
      } catch (error) {
        sendJson(res, 200, { jsonrpc: "2.0", id, error: mapError(legacy, error) });
      }
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  };
}
