/**
 * Who is asking: the client address a rate limit is keyed on (shared limits).
 *
 * The TCP peer is the client unless the peer is a configured trusted proxy (`--trust-proxy`
 * CIDRs). Only then is one header read: the one the operator's proxy writes
 * (`--client-address-header`: `X-Forwarded-For` by default, or `Forwarded`, RFC 7239), right to
 * left, skipping addresses that are themselves trusted proxies: the first untrusted one is the
 * client. The other header is never read. A proxy appends to the header it writes and passes the
 * other through as the client sent it (nginx's and HAProxy's usual settings), so reading both, or
 * preferring one when present, would let a client pick its own bucket with the header its proxy
 * leaves alone. A header from anyone but a trusted proxy is ignored too.
 *
 * An IPv6 client gets a whole /64 (one subscriber's usual allocation), so a limit cannot be dodged
 * by walking the 2^64 addresses of one network.
 */
import { BlockList, isIP } from "node:net";

/** The forwarding headers a trusted proxy may write; the holder believes one of them. */
export const CLIENT_ADDRESS_HEADERS = ["x-forwarded-for", "forwarded"] as const;
export type ClientAddressHeader = (typeof CLIENT_ADDRESS_HEADERS)[number];
/** What nginx (`$proxy_add_x_forwarded_for`) and HAProxy (`option forwardfor`) write. */
export const DEFAULT_CLIENT_ADDRESS_HEADER: ClientAddressHeader = "x-forwarded-for";

/** `X-Forwarded-For` or `Forwarded`, in any case; throws a RangeError naming the two. */
export function parseClientAddressHeader(value: string): ClientAddressHeader {
  const name = value.trim().toLowerCase();
  if ((CLIENT_ADDRESS_HEADERS as readonly string[]).includes(name)) return name as ClientAddressHeader;
  throw new RangeError(
    `the client address header is x-forwarded-for or forwarded (the one your proxy writes), not ${JSON.stringify(value)}`,
  );
}

export interface ClientAddressOptions {
  /** CIDRs (or single addresses) of proxies whose forwarding header is believed. */
  trustProxy?: readonly string[];
  /** The one header those proxies write (default `x-forwarded-for`); the other is never read. */
  header?: ClientAddressHeader;
}

/** The client address of a request: the TCP peer, or what a trusted proxy says. */
export type ClientAddressResolver = (
  peer: string | undefined,
  headers: Headers | Record<string, string | string[] | undefined>,
) => string | undefined;

/** Parses `--trust-proxy` values; throws a RangeError naming the bad entry. */
export function parseTrustedProxies(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const raw of entries) {
    const entry = raw.trim();
    if (entry === "") continue;
    const [address = "", prefixText, ...rest] = entry.split("/");
    const family = isIP(address);
    const prefix = prefixText === undefined ? (family === 6 ? 128 : 32) : Number(prefixText);
    if (
      family === 0 ||
      rest.length > 0 ||
      (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) ||
      prefix > (family === 6 ? 128 : 32)
    ) {
      throw new RangeError(
        `a trusted proxy is an address or a CIDR such as 10.0.0.0/8 or fd00::/8, not ${JSON.stringify(entry)}`,
      );
    }
    list.addSubnet(address, prefix, family === 6 ? "ipv6" : "ipv4");
  }
  return list;
}

/** An address without brackets, zone or port, IPv4-mapped IPv6 as IPv4; undefined if not an IP. */
export function normaliseAddress(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  let text = value.trim().replace(/^"|"$/g, "");
  if (text.startsWith("[")) {
    const end = text.indexOf("]");
    if (end < 0) return undefined;
    text = text.slice(1, end);
  } else if (/^\d{1,3}(\.\d{1,3}){3}:\d+$/.test(text)) {
    text = text.slice(0, text.lastIndexOf(":"));
  }
  text = text.replace(/%.*$/, "").toLowerCase();
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(text);
  if (mapped?.[1] !== undefined) text = mapped[1];
  return isIP(text) === 0 ? undefined : text;
}

/** Expands an IPv6 address to its eight 16-bit groups. */
function ipv6Groups(address: string): number[] {
  let head = address;
  let tail = "";
  const dotted = /(\d{1,3}(?:\.\d{1,3}){3})$/.exec(address);
  if (dotted?.[1] !== undefined) {
    const [a, b, c, d] = dotted[1].split(".").map(Number) as [number, number, number, number];
    tail = `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
    head = address.slice(0, -dotted[1].length) + tail;
  }
  const [left = "", right] = head.split("::");
  const l = left === "" ? [] : left.split(":");
  const r = right === undefined || right === "" ? [] : right.split(":");
  const missing = right === undefined ? 0 : 8 - l.length - r.length;
  return [...l, ...Array<string>(missing).fill("0"), ...r].map((g) => Number.parseInt(g, 16));
}

/**
 * The key a limit counts an address under: IPv4 as it is, IPv6 as its /64 (`2001:db8:1:2::/64`).
 * Undefined for something that is not an IP address.
 */
export function addressKey(value: string | undefined): string | undefined {
  const address = normaliseAddress(value);
  if (address === undefined) return undefined;
  if (isIP(address) === 4) return address;
  const groups = ipv6Groups(address).slice(0, 4);
  return `${groups.map((g) => g.toString(16)).join(":")}::/64`;
}

function header(
  headers: Headers | Record<string, string | string[] | undefined>,
  name: string,
): string | undefined {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined;
  const value = (headers as Record<string, string | string[] | undefined>)[name];
  return Array.isArray(value) ? value.join(",") : value;
}

/** The `for=` addresses of a Forwarded header, in order (RFC 7239 §4, §6). */
function forwardedFor(value: string): (string | undefined)[] {
  const out: (string | undefined)[] = [];
  for (const element of value.split(",")) {
    let found: string | undefined;
    for (const pair of element.split(";")) {
      const eq = pair.indexOf("=");
      if (eq < 0) continue;
      if (pair.slice(0, eq).trim().toLowerCase() === "for") found = pair.slice(eq + 1).trim();
    }
    out.push(found === undefined ? undefined : normaliseAddress(found));
  }
  return out;
}

export function createClientAddressResolver(options: ClientAddressOptions = {}): ClientAddressResolver {
  const trusted = parseTrustedProxies(options.trustProxy ?? []);
  const anyTrusted = (options.trustProxy ?? []).some((entry) => entry.trim() !== "");
  const isTrusted = (address: string) => trusted.check(address, isIP(address) === 6 ? "ipv6" : "ipv4");
  const believed = options.header ?? DEFAULT_CLIENT_ADDRESS_HEADER;
  const hops = (value: string): (string | undefined)[] =>
    believed === "forwarded" ? forwardedFor(value) : value.split(",").map((part) => normaliseAddress(part));

  return (peerValue, headers) => {
    const peer = normaliseAddress(peerValue);
    if (peer === undefined || !anyTrusted || !isTrusted(peer)) return peer;
    const value = header(headers, believed);
    if (value === undefined) return peer;
    const chain = hops(value);
    // Right to left: the nearest hop was added by our own proxy; the first untrusted hop is the client.
    for (let i = chain.length - 1; i >= 0; i--) {
      const hop = chain[i];
      // An unknown or obfuscated hop (RFC 7239 "unknown", "_hidden"): nothing further left is believed.
      if (hop === undefined) return peer;
      if (!isTrusted(hop)) return hop;
    }
    return chain.length > 0 && chain[0] !== undefined ? chain[0] : peer;
  };
}
