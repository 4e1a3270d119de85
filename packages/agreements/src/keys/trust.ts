import { DEFAULT_TRUSTED_ORIGIN, KEY_PAGE_PATH_PREFIX } from "../constants.js";
import { AgreementError } from "../errors.js";
import { KEY_PAGE_FORM, keyPageOf } from "../jws/header.js";
import type { KeyRequest, KeyResolver, TrustedKey } from "../jws/resolver.js";
import { domainVouchesFor, systemTxtResolver, type TxtResolver } from "./dns.js";
import { createKeyPageFetcher, type KeyPageSource } from "./fetch.js";
import type { KeyPage, PageKey } from "./page.js";

export interface KeyResolverOptions {
  /**
   * Origins whose key pages are trusted, e.g. "https://api.stackshift.cloud" (the default, the
   * profile's trusted host). A jku anywhere else is refused before anything is fetched.
   */
  readonly trustedOrigins?: readonly string[];
  /** Where pages come from; default `createKeyPageFetcher()` (SSRF-safe, no redirects, cached). */
  readonly source?: KeyPageSource;
  /** For `_agent-agreements.<domain>` TXT records; default the system resolver. */
  readonly txt?: TxtResolver;
  /**
   * Trust a key page at any origin, because `source` holds only pages the user handed over (files
   * given to a checker, pasted on a page) and fetches nothing. The page must still be the page of
   * the jku's party, list the sender and hold the kid. Used when no origin is configured.
   */
  readonly trustGivenPages?: boolean;
}

const normaliseOrigin = (origin: string): string => {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    throw new RangeError(`the trusted origin ${JSON.stringify(origin)} is not a URL`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw new RangeError("a trusted origin must be http(s)");
  return url.origin;
};

const fmt = (seconds: number): string => new Date(seconds * 1000).toISOString().replace(".000Z", "Z");

/** The address tied to the party by the page itself: the exact address, then its domain. */
const listedOnPage = (page: KeyPage, address: string): "address" | "domain" | undefined => {
  const lower = address.toLowerCase();
  if (page.addresses.some((listed) => listed.toLowerCase() === lower)) return "address";
  if (page.domains.includes(lower.slice(lower.lastIndexOf("@") + 1))) return "domain";
  return undefined;
};

/** The address tied to the party: exact address, then the address's domain, then DNS TXT. */
const vouch = async (
  page: KeyPage,
  address: string,
  txt: TxtResolver,
): Promise<TrustedKey["vouchedBy"] | undefined> => {
  const domain = address.toLowerCase().slice(address.lastIndexOf("@") + 1);
  return (await domainVouchesFor(txt, domain, page.party)) ? "dns" : undefined;
};

/**
 * The profile's time semantics for one signature made at `issuedAt`: a key signs from its
 * creation; a retired key no longer signs but checks what it made while active; a signature made
 * at or after revocation fails with key revoked, an earlier one checks with a warning.
 */
export const judgeKeyTime = (key: PageKey, issuedAt: number): { warnings: string[] } => {
  if (key.revoked_at !== undefined && issuedAt >= key.revoked_at) {
    throw new AgreementError(
      "ERR_KEY_REVOKED",
      `key revoked: the key ${key.kid} was revoked at ${fmt(key.revoked_at)}, at or before the signature was made (${fmt(issuedAt)})`,
    );
  }
  if (issuedAt < key.created_at) {
    throw new AgreementError(
      "ERR_KEY_NOT_YET_VALID",
      `the signature claims to be made at ${fmt(issuedAt)}, before the key ${key.kid} existed (${fmt(key.created_at)})`,
    );
  }
  if (key.retired_at !== undefined && issuedAt >= key.retired_at) {
    throw new AgreementError(
      "ERR_KEY_RETIRED",
      `the key ${key.kid} was retired at ${fmt(key.retired_at)} and no longer signs; the signature was made at ${fmt(issuedAt)}`,
    );
  }
  const warnings: string[] = [];
  if (key.revoked_at !== undefined) {
    warnings.push(
      `the key ${key.kid} was revoked at ${fmt(key.revoked_at)}, after this signature was made (${fmt(issuedAt)})`,
    );
  }
  return { warnings };
};

/**
 * The trust rule: accept a jku only if it is a key page of the exact form on a trusted origin,
 * fetch it (no redirects), require the page's party to list the signer's address or domain (or the
 * domain to vouch by DNS TXT), find the kid, and judge the key at the signature's time.
 */
export const createKeyResolver = (options: KeyResolverOptions = {}): KeyResolver => {
  const givenPages = options.trustGivenPages === true;
  const trusted = new Set(
    (options.trustedOrigins ?? (givenPages ? [] : [DEFAULT_TRUSTED_ORIGIN])).map(normaliseOrigin),
  );
  if (trusted.size === 0 && !givenPages) throw new RangeError("at least one trusted origin is needed");
  const source = options.source ?? createKeyPageFetcher();
  const txt = options.txt ?? systemTxtResolver;

  return async (request: KeyRequest): Promise<TrustedKey> => {
    const page = keyPageOf(request.jku);
    if (!page) {
      throw new AgreementError(
        "ERR_JKU_UNTRUSTED",
        `the jku is not a party key page address (${KEY_PAGE_FORM})`,
      );
    }
    const expected = `${page.origin}${KEY_PAGE_PATH_PREFIX}${page.party}.json`;
    if ((!givenPages && !trusted.has(page.origin)) || page.href !== expected) {
      throw new AgreementError(
        "ERR_JKU_UNTRUSTED",
        `the jku ${request.jku} is not a key page on a trusted host (${[...trusted].join(", ") || "none is trusted"})`,
      );
    }
    if (request.signer.party !== undefined && request.signer.party !== page.party) {
      throw new AgreementError(
        "ERR_JKU_UNTRUSTED",
        `the sender names the party ${request.signer.party} but the jku is the key page of ${page.party}`,
      );
    }
    const keyPage = await source(new URL(page.href), page.party);
    // The page answers for nearly every sender; DNS is asked only when it does not.
    const vouchedBy =
      listedOnPage(keyPage, request.signer.address) ?? (await vouch(keyPage, request.signer.address, txt));
    if (!vouchedBy) {
      throw new AgreementError(
        "ERR_SENDER_NOT_LISTED",
        `the party ${page.party} does not list the sender ${request.signer.address} or its domain, and no DNS TXT record vouches for it`,
      );
    }
    const key = keyPage.keys.find((candidate) => candidate.kid === request.kid);
    if (!key) {
      throw new AgreementError(
        "ERR_KEY_NOT_FOUND",
        `the key page of ${page.party} has no key ${request.kid}`,
      );
    }
    const { warnings } = judgeKeyTime(key, request.issuedAt);
    return {
      jwk: { kty: "OKP", crv: "Ed25519", x: key.x },
      kid: key.kid,
      party: page.party,
      vouchedBy,
      // A page is vouched for only when it was fetched from an origin the checker trusts.
      keysFrom: !givenPages && source.supplied !== true ? "trusted_origin" : "as_supplied",
      warnings,
    };
  };
};
