/** A loopback HTTP server that answers every request with one JSON body: a card as a peer serves it. */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface JsonServer {
  /** The card address on this server. */
  readonly url: string;
  readonly origin: string;
  /** How many requests reached it. */
  readonly hits: () => number;
  close(): Promise<void>;
}

export async function serveJson(body: unknown): Promise<JsonServer> {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  let hits = 0;
  const server = http.createServer((_request, response) => {
    hits++;
    response.writeHead(200, { "content-type": "application/json" });
    response.end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${origin}/.well-known/agent-card.json`,
    origin,
    hits: () => hits,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
