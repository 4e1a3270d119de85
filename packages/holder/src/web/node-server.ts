/**
 * Serving a web-standard app on Node ports with @hono/node-server: `listen` as often as wanted,
 * `close` ends them all (open connections too).
 */
import type { AddressInfo } from "node:net";
import { type ServerType, serve } from "@hono/node-server";

type FetchCallback = Parameters<typeof serve>[0]["fetch"];

export interface ListenAddress {
  port: number;
  host: string;
  url: string;
}

export interface NodeServers {
  listen(port: number, host: string): Promise<ListenAddress>;
  close(): Promise<void>;
}

export function nodeServers(fetch: FetchCallback): NodeServers {
  const servers: ServerType[] = [];
  return {
    async listen(port, host) {
      const server = serve({ fetch, port, hostname: host });
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once("listening", resolve);
        server.once("error", reject);
      });
      const address = server.address() as AddressInfo;
      const shown = address.family === "IPv6" ? `[${address.address}]` : address.address;
      return { port: address.port, host: address.address, url: `http://${shown}:${address.port}` };
    },
    async close() {
      await Promise.all(
        servers.map(
          (server) =>
            new Promise<void>((resolve) => {
              server.close(() => resolve());
              (server as { closeAllConnections?: () => void }).closeAllConnections?.();
            }),
        ),
      );
    },
  };
}

/** A host name or address that only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}
