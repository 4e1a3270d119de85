import type { IncomingMessage, ServerResponse } from "node:http";
import { DEFAULT_MAX_BODY_BYTES, type Receiver } from "./receiver.js";

export interface NodeHandlerOptions {
  /** Same limit as the receiver's; the adapter stops reading past it instead of buffering. */
  maxBodyBytes?: number;
}

/** Serves a web-standard receiver from `node:http` (or Express/Fastify raw handlers). */
export function toNodeHandler(receiver: Receiver, options: NodeHandlerOptions = {}) {
  const limit = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  return (req: IncomingMessage, res: ServerResponse): void => {
    handle(receiver, req, res, limit).catch(() => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: "ERR_WEBHOOK_INTERNAL", message: "the receiver failed" }));
    });
  };
}

async function handle(
  receiver: Receiver,
  req: IncomingMessage,
  res: ServerResponse,
  limit: number,
): Promise<void> {
  const { body, truncated } = await readUpTo(req, limit);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  const init: RequestInit = { method: req.method ?? "GET", headers };
  // One byte over the limit is enough for the receiver to answer 413 without us buffering the rest.
  if (init.method !== "GET" && init.method !== "HEAD") init.body = new Uint8Array(body);
  headers.delete("content-length");
  const response = await receiver(new Request(`http://receiver${req.url ?? "/"}`, init));
  const out: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    out[name] = value;
  });
  if (truncated) out.connection = "close";
  res.writeHead(response.status, out);
  res.end(Buffer.from(await response.arrayBuffer()));
  if (truncated) res.once("finish", () => req.destroy());
}

function readUpTo(req: IncomingMessage, limit: number): Promise<{ body: Buffer; truncated: boolean }> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"]);
    if (Number.isFinite(declared) && declared > limit) {
      req.pause();
      resolve({ body: Buffer.alloc(limit + 1), truncated: true });
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      chunks.push(chunk);
      if (size > limit) {
        req.off("data", onData);
        req.pause();
        resolve({ body: Buffer.concat(chunks).subarray(0, limit + 1), truncated: true });
      }
    };
    req.on("data", onData);
    req.once("end", () => resolve({ body: Buffer.concat(chunks, size), truncated: false }));
    req.once("error", reject);
  });
}
