// A plain round-robin HTTP proxy on loopback, for multi-process tests and the soak script (issue
// #14): each request goes to the next upstream in turn, no stickiness, like a balancer in front of
// several `doorbell serve`. It appends the client's address (the TCP peer: a client may connect
// from any 127.0.0.0/8 address, or name one in the `x-test-client` header) to X-Forwarded-For, as
// nginx's `$proxy_add_x_forwarded_for` and HAProxy's `option forwardfor` do, or with
// `{ header: "forwarded" }` to RFC 7239 Forwarded (`for=…`), so distinct clients behind it are
// told apart by a holder started with `--trust-proxy 127.0.0.1/32`. The other header passes through
// as the client sent it, as it does through either balancer unless told to clear it.
// Responses stream through (SSE works). An upstream that refuses the connection (a dead process)
// is skipped and the request goes to the next one: it never reached a process, so this is not a
// retry. `answered` and `refused` count per upstream, in the order given.
import { once } from "node:events";
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";

export interface RoundRobinProxy {
  /** http://127.0.0.1:PORT */
  readonly url: string;
  /** Requests each upstream answered, by its index in the list given. */
  readonly answered: number[];
  /** Connections each upstream refused (it was down), by index. */
  readonly refused: number[];
  close(): Promise<void>;
}

/** Request headers that describe one hop, not the request (RFC 9110 §7.6.1). */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "te",
  "trailer",
  "upgrade",
]);

/** An address as a Forwarded `for=` value: IPv6 quoted in brackets (RFC 7239 §6). */
const forwardedNode = (address: string) => (address.includes(":") ? `"[${address}]"` : address);

export async function startRoundRobinProxy(
  upstreams: readonly string[],
  options: { header?: "x-forwarded-for" | "forwarded" } = {},
): Promise<RoundRobinProxy> {
  const written = options.header ?? "x-forwarded-for";
  const origins = [...upstreams];
  let next = 0;
  const answered = origins.map(() => 0);
  const refused = origins.map(() => 0);

  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer, tries: number) => {
    if (origins.length === 0 || tries >= origins.length) {
      res.writeHead(502, { "content-type": "text/plain" }).end("no upstream answered");
      return;
    }
    const index = next++ % origins.length;
    const origin = origins[index] as string;
    const target = new URL(req.url ?? "/", origin);
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined && !HOP_BY_HOP.has(name) && name !== "x-test-client") headers[name] = value;
    }
    const client = (req.headers["x-test-client"] as string | undefined) ?? req.socket.remoteAddress ?? "";
    const prior = req.headers[written];
    const hop = written === "forwarded" ? `for=${forwardedNode(client)}` : client;
    headers[written] = prior ? `${prior}, ${hop}` : hop;
    headers["content-length"] = String(body.length);
    const upstream = httpRequest(target, { method: req.method, headers }, (answer) => {
      answered[index] = (answered[index] as number) + 1;
      const out: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(answer.headers)) {
        if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
      }
      res.writeHead(answer.statusCode ?? 502, out);
      answer.pipe(res);
      answer.on("error", () => res.destroy());
    });
    upstream.on("error", (error: NodeJS.ErrnoException) => {
      // Refused: the request never reached a process, so it goes to the next upstream.
      if (!res.headersSent && error.code === "ECONNREFUSED") {
        refused[index] = (refused[index] as number) + 1;
        forward(req, res, body, tries + 1);
      } else {
        res.destroy();
      }
    });
    res.on("close", () => {
      if (!res.writableFinished) upstream.destroy();
    });
    upstream.end(body);
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("error", () => res.destroy());
    // Buffered so a refused request can go to the next upstream with its body.
    req.on("end", () => forward(req, res, Buffer.concat(chunks), 0));
  });
  server.on("clientError", (_error, socket) => socket.destroy());
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    answered,
    refused,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
