/**
 * Serving a web-standard app on Node ports with @hono/node-server: `listen` as often as wanted,
 * `close` stops accepting, lets requests in flight finish, and ends what is left after a grace period.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
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
  /** Stops accepting at once; resolves once open requests finished, or `graceMs` ended them (default 10 s). */
  close(graceMs?: number): Promise<void>;
}

/**
 * A path served by a Node handler instead of the web-standard app (the built-in OAuth
 * server, oidc-provider, is a Koa app; bridging Koa into `fetch` is not worth it, so the web-standard
 * app answers 404 for these paths and only the Node server serves them).
 */
export interface NodeRoute {
  matches(path: string): boolean;
  /** Serves the request, or calls `next` to leave it to the app (a body already read as `rawBody`). */
  handle(req: IncomingMessage, res: ServerResponse, next: (rawBody?: Buffer) => void): void;
}

export function nodeServers(fetch: FetchCallback, routes: readonly NodeRoute[] = []): NodeServers {
  const servers: ServerType[] = [];
  return {
    async listen(port, host) {
      const server = serve({ fetch, port, hostname: host });
      if (routes.length > 0) {
        // Put the Node routes in front of the app's listener.
        const [appListener] = server.listeners("request") as ((
          req: IncomingMessage,
          res: ServerResponse,
        ) => void)[];
        server.removeAllListeners("request");
        server.on("request", (req: IncomingMessage, res: ServerResponse) => {
          const path = (req.url ?? "/").split("?")[0] ?? "/";
          const route = routes.find((candidate) => candidate.matches(path));
          if (route === undefined) appListener?.(req, res);
          else
            route.handle(req, res, (rawBody) => {
              // The Node adapter reads a body already taken from the stream from `rawBody`.
              if (rawBody !== undefined) Object.assign(req, { rawBody });
              appListener?.(req, res);
            });
        });
      }
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once("listening", resolve);
        server.once("error", reject);
      });
      const address = server.address() as AddressInfo;
      const shown = address.family === "IPv6" ? `[${address.address}]` : address.address;
      return { port: address.port, host: address.address, url: `http://${shown}:${address.port}` };
    },
    async close(graceMs = 10_000) {
      await Promise.all(
        servers.map(
          (server) =>
            new Promise<void>((resolve) => {
              const http = server as { closeAllConnections?: () => void; closeIdleConnections?: () => void };
              // Graceful drain: idle keep-alive connections go now, requests in flight finish, and
              // a connection whose last response ends later (a stream the endpoint closes) goes as
              // it falls idle, not after its keep-alive timeout.
              const force = setTimeout(() => http.closeAllConnections?.(), graceMs);
              const idle = setInterval(() => http.closeIdleConnections?.(), 50);
              server.close(() => {
                clearTimeout(force);
                clearInterval(idle);
                resolve();
              });
              http.closeIdleConnections?.();
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
