/**
 * One Host allow-list for every route (against DNS rebinding): a request is answered
 * only when its Host names this holder, the public URL's host or an extra allowed host, or, when
 * the holder is reached on loopback, localhost / 127.0.0.1 / [::1]. A rebinding page makes the
 * browser send the attacker's own name in Host, so it never reaches a page, the mailbox, the
 * sign-in pages or /mcp. Checked before any handler (registered first on the app, and in front of
 * the Node routes of the built-in OAuth server).
 *
 * Host is compared without the port: proxies and port forwarding change ports, not names.
 */

import { hostnameOf } from "@doorbell/mcp-endpoint";
import type { MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";

export interface HostPolicy {
  /** The holder's public origin; its host is always allowed. */
  publicUrl: string;
  /** More host names (ports ignored). */
  allowedHosts?: readonly string[];
  /**
   * Whether loopback names are allowed: a boolean, or asked per request (the holder allows them
   * once it listens on a loopback address). Default: when the public URL's host is loopback.
   */
  loopback?: boolean | (() => boolean);
}

const LOOPBACK_NAMES: ReadonlySet<string> = new Set(["localhost", "127.0.0.1", "[::1]"]);

export const isLoopbackName = (name: string): boolean =>
  LOOPBACK_NAMES.has(name) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);

/** Whether a Host header value names this holder. */
export function createHostAllowList(policy: HostPolicy): (host: string | null | undefined) => boolean {
  const publicName = hostnameOf(new URL(policy.publicUrl).host);
  const names = new Set<string>(publicName === undefined ? [] : [publicName]);
  for (const extra of policy.allowedHosts ?? []) {
    const name = hostnameOf(extra);
    if (name !== undefined) names.add(name);
  }
  const loopback =
    typeof policy.loopback === "function"
      ? policy.loopback
      : (
          (fixed) => () =>
            fixed
        )(policy.loopback ?? (publicName !== undefined && isLoopbackName(publicName)));
  return (host) => {
    if (host === null || host === undefined) return false;
    const name = hostnameOf(host);
    if (name === undefined) return false;
    return names.has(name) || (isLoopbackName(name) && loopback());
  };
}

const REFUSAL = "This server does not answer for that host name (DNS rebinding protection).\n";

/**
 * The answer to a refused Host: 403 with nothing of the holder in it, as the MCP SDK's own Host
 * check answers; on the MCP endpoint a JSON-RPC error an MCP client can show.
 */
export function hostRefused(path: string): Response {
  const mcp = path === "/mcp";
  const body = mcp
    ? JSON.stringify({
        jsonrpc: "2.0",
        error: {
          code: -32000,
          message: "this holder does not answer for that Host (DNS rebinding protection)",
        },
        id: null,
      })
    : REFUSAL;
  return new Response(body, {
    status: 403,
    headers: {
      "content-type": mcp ? "application/json" : "text/plain; charset=utf-8",
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
    },
  });
}

const HEALTH_PATHS: ReadonlySet<string> = new Set(["/healthz", "/readyz"]);

/** Hono middleware: answers 403 before any handler when Host is not on the list. */
export function hostGuard(policy: HostPolicy): MiddlewareHandler {
  const allowed = createHostAllowList(policy);
  return async (c, next) => {
    // A balancer's or orchestrator's probe names the machine's address, not ours; the health
    // answers carry nothing and change nothing, so they answer any Host. Asked of the routes the
    // router matched (GET, which HEAD is served by), not of the path as typed, so the exemption
    // covers the health routes exactly however the router comes to match paths.
    if (matchedRoutes(c).some((route) => route.method === "GET" && HEALTH_PATHS.has(route.path)))
      return next();
    // Under the Node server the URL is built from Host; a Request made in-process has only its URL.
    if (!allowed(c.req.header("host") ?? new URL(c.req.url).host)) return hostRefused(c.req.path);
    await next();
  };
}
