/**
 * Who may see the operator page: the same rule as /metrics (observability/metrics-route.ts), with
 * the same token. With a token, every request needs it; without one the page answers anyone who
 * can reach it, which the holder allows only while both its listening address and its public URL
 * are loopback (`operatorExposureProblem`, checked by `listen`).
 *
 * A browser cannot add a bearer header without script, and the page has none, so the token is
 * also taken as the password of HTTP Basic authentication (any user name): the browser asks for
 * it once and sends it with every request, the replay form's POST included.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { Context } from "hono";

export interface OperatorPageOptions {
  /**
   * The token every request needs (`Authorization: Bearer <token>`, or as a Basic password);
   * `doorbell serve` gives the metrics token. Without it the page is for loopback holders only.
   */
  token?: string;
}

const digest = (value: string) => createHash("sha256").update(value, "utf8").digest();

/** The token a request carries: a bearer token, or the password of Basic credentials. */
function presented(header: string | undefined): string {
  if (header === undefined) return "";
  const bearer = /^Bearer\s+(.+)$/i.exec(header);
  if (bearer?.[1] !== undefined) return bearer[1].trim();
  const basic = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header);
  if (basic?.[1] === undefined) return "";
  const decoded = Buffer.from(basic[1], "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  return colon < 0 ? "" : decoded.slice(colon + 1);
}

/** A check of each request against the token, or undefined when the page needs none. */
export function operatorAccess(
  options: OperatorPageOptions,
): ((c: Context) => Response | undefined) | undefined {
  if (options.token === undefined) return undefined;
  const expected = digest(options.token);
  return (c) => {
    // Hashes of equal length: the comparison's time says nothing about the token.
    if (timingSafeEqual(digest(presented(c.req.header("authorization"))), expected)) return undefined;
    return new Response(
      "The operator page needs the metrics token: Authorization: Bearer <token>, or as the password of Basic authentication.\n",
      {
        status: 401,
        headers: {
          "www-authenticate": 'Basic realm="Doorbell operator", charset="UTF-8"',
          "content-type": "text/plain; charset=utf-8",
          "cache-control": "no-store",
          "x-content-type-options": "nosniff",
        },
      },
    );
  };
}

/**
 * Why an open operator page must not be served here, or undefined when it may: a token is needed
 * as soon as the holder listens beyond loopback or is published under a non-loopback URL.
 */
export function operatorExposureProblem(
  options: OperatorPageOptions | undefined,
  listenHost: string,
  publicUrl: string,
  isLoopbackHost: (host: string) => boolean,
): string | undefined {
  if (options === undefined || options.token !== undefined) return undefined;
  const publicHost = new URL(publicUrl).hostname.replace(/^\[|\]$/g, "");
  if (isLoopbackHost(listenHost) && isLoopbackHost(publicHost)) return undefined;
  return `the operator page is on without a token, and this holder is reachable beyond this machine (${isLoopbackHost(listenHost) ? `public URL ${publicHost}` : `listening on ${listenHost}`}): give a metrics token (DOORBELL_METRICS_TOKEN) or turn the operator page off`;
}
