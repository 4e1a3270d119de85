import { KEY_PAGE_PATH_PREFIX } from "../constants.js";
import type { KeyPage } from "./page.js";

export interface KeyPageHandlerOptions {
  /** The page of a party, or undefined when this server has no such party. */
  readonly pageOf: (party: string) => KeyPage | undefined | Promise<KeyPage | undefined>;
  /** Cache-Control max-age in seconds ("the page is cacheable"). Default 300. */
  readonly maxAgeSeconds?: number;
}

const PATH = /^\/\.well-known\/agent-agreements\/(pty_[a-z0-9]{20})\.json$/;

const plain = (status: number, text: string, headers: Record<string, string> = {}): Response =>
  new Response(`${text}\n`, {
    status,
    headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store", ...headers },
  });

/**
 * Serves `/.well-known/agent-agreements/{party}.json` as a web-standard handler: GET and HEAD
 * only, no sign-in, no cookies read or set, never a redirect, cacheable, readable cross-origin
 * (a checker page in a browser may fetch it). Anything else under that path is 404.
 */
export const createKeyPageHandler = (
  options: KeyPageHandlerOptions,
): ((request: Request) => Promise<Response>) => {
  const maxAge = options.maxAgeSeconds ?? 300;
  if (!Number.isInteger(maxAge) || maxAge < 0 || maxAge > 86_400) {
    throw new RangeError("maxAgeSeconds must be a whole number from 0 to 86400");
  }
  return async (request) => {
    const url = new URL(request.url);
    const match = PATH.exec(url.pathname);
    if (!url.pathname.startsWith(KEY_PAGE_PATH_PREFIX) || !match?.[1]) return plain(404, "no such key page");
    if (request.method !== "GET" && request.method !== "HEAD") {
      return plain(405, "key pages are read with GET", { allow: "GET, HEAD" });
    }
    const page = await options.pageOf(match[1]);
    if (!page) return plain(404, "no such key page");
    const body = `${JSON.stringify(page, null, 2)}\n`;
    return new Response(request.method === "HEAD" ? null : body, {
      status: 200,
      headers: {
        "content-type": "application/json; charset=utf-8",
        "cache-control": `public, max-age=${maxAge}`,
        "access-control-allow-origin": "*",
        "x-content-type-options": "nosniff",
      },
    });
  };
};
