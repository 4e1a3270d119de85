import { type EgressPolicy, type GetJsonResult, getJson, productionPolicy } from "@doorbell/webhooks";
import { AgreementError } from "../errors.js";
import { type KeyPage, parseKeyPage } from "./page.js";

/** Where key pages come from: the network (`createKeyPageFetcher`) or files (`staticKeyPages`). */
/** Where key pages come from; `supplied` marks pages handed over by the user, fetched from nowhere. */
export type KeyPageSource = ((url: URL, party: string) => Promise<KeyPage>) & { readonly supplied?: true };

export interface KeyPageFetcherOptions {
  /** The egress policy; default `productionPolicy()` (https, 443, public addresses, 10 s). */
  readonly policy?: EgressPolicy;
  /** Replaces the egress GET entirely (tests); gets the same result shape. */
  readonly get?: (url: URL) => Promise<GetJsonResult>;
  /** Seconds to keep a page whose answer names no max-age. Default 300. */
  readonly defaultTtlSeconds?: number;
  /** The longest a page is kept whatever its max-age says. Default 3600. */
  readonly maxTtlSeconds?: number;
  readonly maxEntries?: number;
  /**
   * Seconds to remember that a page could not be fetched or read, so a checker handed many
   * records naming one dead page asks once, not once per signature. Default 30; 0 turns it off.
   */
  readonly failureTtlSeconds?: number;
  /** Wall clock in milliseconds. */
  readonly now?: () => number;
}

/**
 * Failures that say nothing about the page itself (the network, the clock, the server's health):
 * a check that meets one "could not check". A redirect, a 4xx, a body that is not a key page or a
 * refused address are answers about the page: "does not check out".
 */
const UNREACHABLE: ReadonlySet<string> = new Set([
  "dns_error",
  "connection_refused",
  "connection_error",
  "timeout",
  "tls_error",
  "aborted",
  "http_5xx",
]);

/** The largest key page read: a thousand addresses and fifty keys fit well inside. */
export const MAX_KEY_PAGE_BYTES = 256 * 1024;

const ttlOf = (cacheControl: string | undefined, fallback: number, ceiling: number): number => {
  if (cacheControl === undefined) return fallback;
  const directives = cacheControl
    .toLowerCase()
    .split(",")
    .map((d) => d.trim());
  if (directives.some((d) => d === "no-store" || d === "no-cache" || d === "private")) return 0;
  const maxAge = directives.map((d) => /^max-age=(\d{1,9})$/.exec(d)?.[1]).find((v) => v !== undefined);
  return Math.min(maxAge === undefined ? fallback : Number(maxAge), ceiling);
};

/**
 * Fetches key pages through the SSRF-safe egress, never following a redirect, and keeps each
 * for its max-age (bounded). Concurrent asks for one page share one request; a failure is
 * remembered briefly (`failureTtlSeconds`). Which addresses may be fetched at all is the trust rule's decision, made before this.
 */
export const createKeyPageFetcher = (options: KeyPageFetcherOptions = {}): KeyPageSource => {
  const now = options.now ?? Date.now;
  const fallback = options.defaultTtlSeconds ?? 300;
  const ceiling = options.maxTtlSeconds ?? 3600;
  const maxEntries = options.maxEntries ?? 1000;
  let policy = options.policy;
  const get =
    options.get ??
    ((url: URL) => {
      policy ??= productionPolicy();
      return getJson({ url, policy, maxBytes: MAX_KEY_PAGE_BYTES });
    });
  const failureTtl = options.failureTtlSeconds ?? 30;
  const cache = new Map<string, { page: KeyPage; expiresAt: number }>();
  const failures = new Map<string, { error: AgreementError; expiresAt: number }>();
  const inFlight = new Map<string, Promise<KeyPage>>();

  const rememberFailure = (href: string, error: unknown) => {
    if (failureTtl <= 0 || !(error instanceof AgreementError)) return;
    if (failures.size >= maxEntries) failures.delete(failures.keys().next().value as string);
    failures.set(href, { error, expiresAt: now() + failureTtl * 1000 });
  };

  const load = async (url: URL, party: string): Promise<KeyPage> => {
    const result = await get(url);
    if (!result.ok) {
      const redirect = result.category === "http_3xx" ? " (a redirect, which is never followed)" : "";
      // Unreachable is not the same as absent: the record "could not be checked", not refused.
      const code = UNREACHABLE.has(result.category) ? "ERR_KEY_PAGE_UNREACHABLE" : "ERR_KEY_PAGE_UNAVAILABLE";
      throw new AgreementError(
        code,
        `the key page ${url.href} could not be fetched: ${result.reason}${redirect}`,
      );
    }
    const page = await parseKeyPage(result.body, party);
    const ttl = ttlOf(result.cacheControl, fallback, ceiling);
    if (ttl > 0) {
      if (cache.size >= maxEntries) cache.delete(cache.keys().next().value as string);
      cache.set(url.href, { page, expiresAt: now() + ttl * 1000 });
    }
    return page;
  };

  return async (url, party) => {
    const cached = cache.get(url.href);
    if (cached && cached.expiresAt > now()) return cached.page;
    if (cached) cache.delete(url.href);
    const failed = failures.get(url.href);
    if (failed && failed.expiresAt > now()) throw failed.error;
    if (failed) failures.delete(url.href);
    let pending = inFlight.get(url.href);
    if (!pending) {
      pending = load(url, party)
        .catch((error: unknown) => {
          rememberFailure(url.href, error);
          throw error;
        })
        .finally(() => inFlight.delete(url.href));
      inFlight.set(url.href, pending);
    }
    return pending;
  };
};

/**
 * Key pages given as data (files a checker was handed, or a test's pages), keyed by party. A
 * party without a page is "could not be found", exactly as a 404 would be.
 */
export const staticKeyPages = async (pages: readonly unknown[]): Promise<KeyPageSource> => {
  const byParty = new Map<string, KeyPage>();
  for (const value of pages) {
    const page = await parseKeyPage(value);
    byParty.set(page.party, page);
  }
  const source = async (url: URL, party: string) => {
    const page = byParty.get(party);
    if (!page) {
      throw new AgreementError("ERR_KEY_PAGE_UNAVAILABLE", `the key page ${url.href} could not be found`);
    }
    return page;
  };
  return Object.assign(source, { supplied: true as const });
};
