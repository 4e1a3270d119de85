/**
 * GET /metrics in the Prometheus text format. Off unless the operator turns it on.
 * With a token, a scrape needs `Authorization: Bearer <token>`; without one it is open, which the
 * holder allows only while both its listening address and its public URL are loopback
 * (`metricsExposureProblem`), so a public holder never shows it to everyone.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { Hono } from "hono";
import { type HolderMetrics, watchRuntime } from "./metrics.js";

export const METRICS_PATH = "/metrics";

export interface MetricsOptions {
  /** A bearer token a scraper must send; without it /metrics answers anyone who can reach it. */
  token?: string;
}

const digest = (value: string) => createHash("sha256").update(value, "utf8").digest();

// biome-ignore lint/suspicious/noExplicitAny: any Hono app (the holder's has node bindings)
export function mountMetrics(app: Hono<any>, metrics: HolderMetrics, options: MetricsOptions): void {
  const expected = options.token === undefined ? undefined : digest(options.token);
  watchRuntime();
  app.get(METRICS_PATH, async (c) => {
    c.header("cache-control", "no-store");
    c.header("x-content-type-options", "nosniff");
    if (expected !== undefined) {
      const header = c.req.header("authorization") ?? "";
      const given = /^Bearer (.+)$/i.exec(header)?.[1] ?? "";
      // Hashes of equal length: the comparison's time says nothing about the token.
      if (!timingSafeEqual(digest(given), expected)) {
        c.header("www-authenticate", 'Bearer realm="metrics"');
        return c.text("A metrics token is needed: Authorization: Bearer <token>\n", 401);
      }
    }
    const { contentType, body } = await metrics.scrape();
    return c.body(body, 200, { "content-type": contentType });
  });
  app.all(METRICS_PATH, (c) => c.text("Method not allowed\n", 405, { allow: "GET, HEAD" }));
}

/**
 * Why open metrics must not be served here, or undefined when they may: a token is needed as soon
 * as the holder listens beyond loopback or is published under a non-loopback URL (a proxy in front).
 */
export function metricsExposureProblem(
  options: MetricsOptions | undefined,
  listenHost: string,
  publicUrl: string,
  isLoopbackHost: (host: string) => boolean,
): string | undefined {
  if (options === undefined || options.token !== undefined) return undefined;
  const publicHost = new URL(publicUrl).hostname.replace(/^\[|\]$/g, "");
  if (isLoopbackHost(listenHost) && isLoopbackHost(publicHost)) return undefined;
  return `/metrics is on without a token, and this holder is reachable beyond this machine (${isLoopbackHost(listenHost) ? `public URL ${publicHost}` : `listening on ${listenHost}`}): give a metrics token (DOORBELL_METRICS_TOKEN) or turn metrics off`;
}
