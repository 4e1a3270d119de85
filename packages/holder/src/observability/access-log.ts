/**
 * One access-log line per request, never with a code in clear: the consent, confirm,
 * manage and notifications links carry their token in the path, the sign-in link carries one too,
 * and OAuth redirects carry codes in the query. The path is logged with those parts replaced by
 * their names (`/manage/:token/withdraw`), and the query with its values dropped (`?code=*`).
 *
 * The request is counted in the metrics under the route that answered it: the pattern the router
 * matched (`/manage/:token/withdraw`, `/oauth/auth/:uid`), one of the app's own routes, fixed when
 * it is built; `other` when no route did. A label is never made from the path a client sent, so
 * junk paths cannot use up labels or push a real route out of them.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Context, MiddlewareHandler } from "hono";
import { routePath } from "hono/route";
import type { Logger } from "pino";
import { CLIENT_CLOSED_REQUEST, clientGone, responseAbandoned } from "./client-gone.js";
import type { HolderMetrics } from "./metrics.js";

/**
 * Paths whose parts after a fixed prefix are secrets or per-person ids, with their names. The
 * actions are listed word by word, so the shapes (and the metric labels made from them) are few.
 */
const SHAPES: readonly [RegExp, string][] = [
  [/^\/manage\/[^/]+\/notifications\/[^/]+\/(allow|stop)$/, "/manage/:token/notifications/:id/$1"],
  [/^\/manage\/[^/]+\/assistants\/[^/]+\/revoke$/, "/manage/:token/assistants/:grant/revoke"],
  [/^\/manage\/[^/]+\/withdraw$/, "/manage/:token/withdraw"],
  [/^\/notifications\/[^/]+\/(allow|stop)$/, "/notifications/:token/$1"],
  [/^\/(consent|confirm|manage|notifications)\/[^/]+$/, "/$1/:token"],
  [/^\/(consent|confirm|manage|notifications)\/.*$/, "/$1/:token/…"],
  [/^\/signin\/[^/]+\/link\/[^/]+$/, "/signin/:uid/link/:token"],
  [/^\/signin\/[^/]+\/(email|approve|deny)$/, "/signin/:uid/$1"],
  [/^\/signin\/.*$/, "/signin/:uid"],
  [/^\/dev\/mailbox\/[^/]+$/, "/dev/mailbox/:id"],
];

/**
 * A part of an unknown path shown as it is: a short plain word. Anything else (long enough to be
 * a token or code, percent-encoded, an address with @) is replaced by `:redacted`.
 */
const PLAIN_PART = /^[A-Za-z0-9_.-]{0,15}$/;

/** Fixed paths logged as they are (their words are longer than a plain part may be). */
const FIXED_PATHS = new Set([
  "/",
  "/mcp",
  "/healthz",
  "/metrics",
  "/check",
  "/dev/mailbox",
  "/.well-known/isto-intents.json",
  "/.well-known/jwks.json",
  "/.well-known/oauth-protected-resource",
  "/.well-known/oauth-protected-resource/mcp",
  "/.well-known/oauth-authorization-server",
]);

/** The path with every code-bearing or id part replaced by its name, as logged. */
export function redactPath(path: string): string {
  for (const [pattern, shape] of SHAPES) {
    if (pattern.test(path)) return path.replace(pattern, shape);
  }
  if (FIXED_PATHS.has(path)) return path;
  return path
    .split("/")
    .map((part) => (PLAIN_PART.test(part) ? part : ":redacted"))
    .slice(0, 12)
    .join("/");
}

/** The metrics label of a request no route answered. */
export const UNROUTED = "other";

/**
 * The metrics label of the route that answered a request on the app: the pattern the route was
 * registered under, or `other` when only `*` middleware ran (an unknown path or method, a refused
 * Host). `secretPaths` are routes' paths that are secrets themselves (the local mailbox's
 * unguessable path): their last part is labelled `:secret`.
 */
export function appRouteLabel(c: Context, secretPaths: readonly string[] = []): string {
  const pattern = routePath(c);
  if (pattern === "" || pattern.includes("*")) return UNROUTED;
  for (const secret of secretPaths) {
    if (pattern === secret || pattern.startsWith(`${secret}/`)) {
      return `${secret.slice(0, secret.lastIndexOf("/"))}/:secret${pattern.slice(secret.length)}`;
    }
  }
  return pattern;
}

/** The query with its values dropped: `?code=*&state=*`. At most 10 names, each cut to 32. */
export function redactQuery(search: string): string {
  if (search === "" || search === "?") return "";
  const names = [...new URLSearchParams(search).keys()]
    .slice(0, 10)
    .map((name) => `${name.replace(/[^A-Za-z0-9_.-]/g, "").slice(0, 32)}=*`);
  return names.length === 0 ? "" : `?${names.join("&")}`;
}

interface RequestFacts {
  method: string;
  /** The raw path (still encoded) and query, as received. */
  path: string;
  /** The route that answered, as a metrics label (a registered pattern, or `other`). */
  route: string;
  search: string;
  status: number;
  seconds: number;
  /** Response bytes, when known. */
  bytes?: number;
  /** The client hung up before the answer was written: logged and counted as 499, whatever `status` was. */
  aborted?: boolean;
}

export type AccessLogger = (facts: RequestFacts) => void;

/** Writes the line and counts the request: the one place both happen. */
export function createAccessLogger(log: Logger, metrics?: HolderMetrics): AccessLogger {
  const access = log.child({ component: "http" });
  return ({ method, path, route, search, status: answered, seconds, bytes, aborted = false }) => {
    const shown = redactPath(path);
    const ms = Math.round(seconds * 10_000) / 10;
    const safeMethod = /^[A-Z]{1,10}$/.test(method) ? method : "OTHER";
    const status = aborted ? CLIENT_CLOSED_REQUEST : answered;
    access.info(
      {
        event: "http.request",
        method: safeMethod,
        path: `${shown}${redactQuery(search)}`,
        status,
        ms,
        ...(bytes === undefined || aborted ? {} : { bytes }),
      },
      `${safeMethod} ${shown} ${status}${aborted ? " (client closed the request)" : ""} ${ms} ms`,
    );
    metrics?.observeRequest(route, safeMethod, status, seconds);
  };
}

/**
 * The middleware for the Hono app: registered first, so it sees every request and answer.
 * `secretPaths` as for appRouteLabel.
 */
export function accessLogMiddleware(
  logger: AccessLogger,
  secretPaths: readonly string[] = [],
): MiddlewareHandler {
  return async (c, next) => {
    const started = performance.now();
    let status = 500;
    try {
      await next();
      status = c.res.status;
    } finally {
      const url = new URL(c.req.url);
      const length = c.res?.headers.get("content-length");
      logger({
        method: c.req.method,
        path: url.pathname,
        route: appRouteLabel(c, secretPaths),
        search: url.search,
        status,
        seconds: (performance.now() - started) / 1000,
        ...(length === null || length === undefined ? {} : { bytes: Number(length) }),
        // Nothing is written yet here: a closed connection means the client left unanswered.
        aborted: clientGone(c),
      });
    }
  };
}

/**
 * The same line for requests served by Node handlers outside the app (the OAuth server);
 * `routeOf` tells, once the request is answered, the handler's route it took (a metrics label).
 */
export function logNodeRequest(
  logger: AccessLogger,
  req: IncomingMessage,
  res: ServerResponse,
  routeOf: () => string | undefined,
): void {
  const started = performance.now();
  // Read now: a mounted app (oidc-provider under /oauth) rewrites req.url while it handles it.
  const raw = req.url ?? "/";
  const method = req.method ?? "GET";
  res.once("close", () => {
    const query = raw.indexOf("?");
    const length = res.getHeader("content-length");
    logger({
      method,
      path: query < 0 ? raw : raw.slice(0, query),
      route: routeOf() ?? UNROUTED,
      search: query < 0 ? "" : raw.slice(query),
      status: res.statusCode,
      seconds: (performance.now() - started) / 1000,
      ...(length === undefined ? {} : { bytes: Number(length) }),
      aborted: responseAbandoned(res),
    });
  });
}
