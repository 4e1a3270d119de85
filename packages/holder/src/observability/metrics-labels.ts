/**
 * Label values kept bounded: a label is one of a few fixed words, checked against a small shape
 * and a cap on distinct values, so a caller cannot grow the label set without bound. A route label
 * is bounded by where it comes from instead: the pattern of a route the app has (access-log.ts).
 */

import { CLIENT_CLOSED_REQUEST } from "./client-gone.js";

/** Distinct tool names and outcomes kept as labels; any more are counted as `other`. */
const MAX_LABEL_VALUES = 64;
const LABEL_SHAPE = /^[a-z][a-z0-9_.-]{0,63}$/;

/** A route pattern: fixed words and `:names` (`/manage/:token/withdraw`). */
const ROUTE_SHAPE = /^\/[A-Za-z0-9_.:/-]{0,79}$/;

/**
 * A route label: the pattern of the route that answered, as the access log tells it (never a
 * path a client sent; `other` for none). There is no cap on distinct values to fill up: the
 * patterns are the app's own few, fixed when it is built, so a flood of junk paths is all `other`
 * and a real route keeps its label however many junk paths came first.
 */
export function routeLabel(pattern: string): string {
  return ROUTE_SHAPE.test(pattern) ? pattern : "other";
}

export function boundedLabel(shape = LABEL_SHAPE): (value: string) => string {
  const seen = new Set<string>();
  return (value) => {
    if (!shape.test(value)) return "other";
    if (seen.has(value)) return value;
    if (seen.size >= MAX_LABEL_VALUES) return "other";
    seen.add(value);
    return value;
  };
}

const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** An HTTP method as a label: one of the usual few, else `other`. */
export function methodLabel(method: string): string {
  return METHODS.has(method) ? method : "other";
}

/**
 * An HTTP status as its class (`2xx`…), else `other`; 499, which only the access log gives (a
 * request its client abandoned, client-gone.ts), is `aborted`, apart from the holder's own 4xx.
 */
export function statusLabel(status: number): string {
  if (status === CLIENT_CLOSED_REQUEST) return "aborted";
  return status >= 100 && status < 600 ? `${Math.floor(status / 100)}xx` : "other";
}
