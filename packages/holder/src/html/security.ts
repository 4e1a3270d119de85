/**
 * What keeps the pages safe without any script: response headers, the shape check of capability
 * tokens in URLs, and the form check against cross-site requests.
 *
 * Form check (all three must pass for a POST to do anything):
 *  1. `Sec-Fetch-Site`, when the browser sends it, is `same-origin`;
 *  2. `Origin`, when sent and not `null`, is one of the holder's origins. (`null` is what a browser
 *     sends for a form POST from a page whose Referrer-Policy is `no-referrer`, as ours is; the
 *     other two checks cover it.);
 *  3. double submit: the hidden `csrf` field equals the `SameSite=Strict; HttpOnly` cookie set
 *     when the form was shown. A cross-site page can neither read the cookie nor make the browser
 *     send it.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import type { Context, MiddlewareHandler } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { CONTENT_SECURITY_POLICY } from "./layout.js";

/** Form bodies larger than this are refused with 413 before they are read. */
export const MAX_FORM_BYTES = 16 * 1024;

/**
 * A page token (consent, confirm, manage) as it may appear in a URL: URL-safe characters only and
 * at most 128 of them. Anything else is answered "unknown link" without asking the services.
 */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{8,128}$/;

export function isTokenShaped(value: string | undefined): value is string {
  return value !== undefined && TOKEN_SHAPE.test(value);
}

export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  "Content-Security-Policy": CONTENT_SECURITY_POLICY,
  "Referrer-Policy": "no-referrer",
  "Cache-Control": "no-store",
  "X-Content-Type-Options": "nosniff",
  "X-Frame-Options": "DENY",
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cross-Origin-Resource-Policy": "same-origin",
};

/** Sets the page headers on every response of the routes it guards (errors included). */
export const pageHeaders: MiddlewareHandler = async (c, next) => {
  await next();
  for (const [name, value] of Object.entries(PAGE_HEADERS)) c.res.headers.set(name, value);
  // A page that shows a capability token must never be stored by a shared cache or the browser.
  c.res.headers.set("Pragma", "no-cache");
};

const CSRF_VALUE = /^[A-Za-z0-9_-]{43}$/;

export interface FormGuard {
  /** The form token for a page about to show a form: the cookie's value, set now if missing. */
  issue(c: Context): string;
  /** Which of the three checks refused the POST, or undefined when all passed. */
  check(c: Context, submitted: string | undefined): "fetch-site" | "origin" | "token" | undefined;
}

export function createFormGuard(options: {
  /** The holder's public origin (config.publicUrl); the request's own origin is also accepted. */
  publicUrl: string;
  random?: (size: number) => Uint8Array;
}): FormGuard {
  const random = options.random ?? ((size: number) => randomBytes(size));
  const publicOrigin = safeOrigin(options.publicUrl);
  const secure = publicOrigin?.startsWith("https:") ?? false;
  // `__Host-` pins the cookie to this host and path "/" (browsers require Secure for it).
  const cookieName = secure ? "__Host-doorbell_form" : "doorbell_form";

  const current = (c: Context): string | undefined => {
    const value = getCookie(c, cookieName);
    return value !== undefined && CSRF_VALUE.test(value) ? value : undefined;
  };

  return {
    issue(c) {
      const existing = current(c);
      if (existing !== undefined) return existing;
      const value = Buffer.from(random(32)).toString("base64url");
      setCookie(c, cookieName, value, { path: "/", httpOnly: true, sameSite: "Strict", secure });
      return value;
    },
    check(c, submitted) {
      const site = c.req.header("sec-fetch-site");
      if (site !== undefined && site !== "same-origin") return "fetch-site";
      const origin = c.req.header("origin");
      if (origin !== undefined && origin !== "null") {
        const own = safeOrigin(c.req.url);
        if (origin !== publicOrigin && origin !== own) return "origin";
      }
      const cookie = current(c);
      if (cookie === undefined || submitted === undefined || !CSRF_VALUE.test(submitted)) return "token";
      return timingSafeEqual(Buffer.from(cookie), Buffer.from(submitted)) ? undefined : "token";
    },
  };
}

function safeOrigin(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

const FORM_TYPES = /^(application\/x-www-form-urlencoded|multipart\/form-data)\s*(;|$)/i;

export type FormResult =
  | { ok: true; fields: Record<string, string> }
  | { ok: false; reason: "content-type" | "malformed" };

/**
 * The submitted form's text fields (the last value of a repeated name). Only HTML form encodings
 * are read; a file part makes the form malformed (none of our forms has one).
 */
export async function readForm(c: Context): Promise<FormResult> {
  const type = c.req.header("content-type") ?? "";
  if (!FORM_TYPES.test(type)) return { ok: false, reason: "content-type" };
  let body: Record<string, unknown>;
  try {
    body = await c.req.parseBody();
  } catch {
    return { ok: false, reason: "malformed" };
  }
  const fields: Record<string, string> = Object.create(null);
  for (const [name, value] of Object.entries(body)) {
    if (typeof value !== "string") return { ok: false, reason: "malformed" };
    fields[name] = value;
  }
  return { ok: true, fields };
}
