import { isIP } from "node:net";
import { bareAddress } from "./address.js";
import { isMetadataHost } from "./metadata-hosts.js";
import { type EgressPolicy, normaliseHost } from "./policy.js";
import { judgeAddress } from "./verdict.js";

export type UrlCheck =
  | {
      readonly ok: true;
      /** The parsed URL without its fragment: post to this, not to the caller's string. */
      readonly url: URL;
      /** Lower case, brackets and trailing dot removed. */
      readonly host: string;
      readonly port: number;
      /** Set when the host is an IP literal (only a development policy lets one through). */
      readonly ipLiteral?: string;
    }
  | { readonly ok: false; readonly reason: string };

const DEFAULT_PORTS: Record<string, number> = { "https:": 443, "http:": 80 };

const refused = (reason: string): UrlCheck => ({ ok: false, reason });

/**
 * Whether the text has a user-info part, empty ones (`https://:@host/`, `https://@host/`)
 * included: the WHATWG parser drops an empty one, other parsers may read the host differently.
 * The authority ends at the first `/`, `\\`, `?` or `#`, as the parser reads special schemes.
 */
const hasUserInfo = (text: string): boolean => {
  const authority = /^[a-z][a-z0-9+.-]*:[\\/]*([^\\/?#]*)/i.exec(text.replace(/[\t\n\r]/g, "").trim());
  return authority?.[1]?.includes("@") === true;
};

const isBlockedHost = (host: string, blocked: readonly string[]): boolean =>
  blocked.some((entry) => (entry.startsWith("*.") ? host.endsWith(entry.slice(1)) : host === entry));

/**
 * Checks a URL against a policy without touching the network, so a subscription can be refused
 * at once with the exact reason. Addresses a name resolves to are checked later, on every
 * connection. Odd IPv4 spellings (`2130706433`, `0x7f.1`, `127.1`) are canonicalised by the
 * WHATWG URL parser first, so they are caught as IP literals like any other.
 */
export const checkUrl = (input: string | URL, policy: EgressPolicy): UrlCheck => {
  let url: URL;
  try {
    url = new URL(String(input));
  } catch {
    return refused("the URL is not a valid absolute URL");
  }
  url.hash = "";
  if (!(policy.protocols as readonly string[]).includes(url.protocol)) {
    return refused(`the URL must use ${policy.protocols.map((p) => p.slice(0, -1)).join(" or ")}`);
  }
  if (url.username !== "" || url.password !== "" || hasUserInfo(String(input))) {
    return refused("the URL must not contain a user name or password");
  }
  const port = url.port === "" ? (DEFAULT_PORTS[url.protocol] ?? 0) : Number(url.port);
  if (policy.ports !== "any" && !policy.ports.includes(port)) {
    return refused(`the URL must use port ${policy.ports.join(" or ")}`);
  }
  const host = normaliseHost(bareAddress(url.hostname));
  if (host === "") return refused("the URL has no host");
  if (isMetadataHost(host)) return refused("the URL names a cloud metadata service");
  if (isBlockedHost(host, policy.blockedHosts)) {
    return refused("the URL points to one of this server's own hosts");
  }
  if (isIP(host) !== 0) {
    if (!policy.allowIpLiterals)
      return refused("the URL must name its host by a domain name, not an IP address");
    // Node never calls `lookup` for a literal, so the literal is judged here, before connecting.
    const judged = judgeAddress(policy, host);
    if (!judged.allowed) return refused(`the URL's IP address is not allowed: ${judged.reason}`);
    return { ok: true, url, host, port, ipLiteral: judged.verdict.address };
  }
  if (policy.requireDomainName) {
    if (host === "localhost" || host.endsWith(".localhost")) {
      return refused("the URL must not name localhost");
    }
    if (!host.includes(".")) {
      return refused("the URL must name a fully qualified domain name, not a single-label host");
    }
  }
  return { ok: true, url, host, port };
};
