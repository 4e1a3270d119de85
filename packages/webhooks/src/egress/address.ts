import { isIP } from "node:net";
import ipaddr from "ipaddr.js";

/**
 * Which block of the address space an IP address belongs to. `public` is the only range a
 * production webhook may be delivered to; every other name says why an address is refused.
 */
export type AddressRange =
  | "public"
  | "invalid"
  | "unspecified"
  | "loopback"
  | "private"
  | "carrierGradeNat"
  | "linkLocal"
  | "ietfProtocol"
  | "documentation"
  | "relay6to4"
  | "benchmarking"
  | "multicast"
  | "reserved"
  | "broadcast"
  | "ipv4Compatible"
  | "uniqueLocal"
  | "siteLocal"
  | "discard"
  | "nat64Local"
  | "teredo"
  | "6to4"
  | "segmentRouting"
  | "notGlobalUnicast"
  | "special";

/** How an IPv4 address was carried inside an IPv6 one, when it was. */
export type IPv4Embedding = "ipv4Mapped" | "siit" | "nat64";

export interface AddressVerdict {
  /** The address in canonical text form (zone id and brackets removed); the input if invalid. */
  readonly address: string;
  readonly public: boolean;
  readonly range: AddressRange;
  /** Set when the verdict was inherited from an IPv4 address embedded in an IPv6 one. */
  readonly embeddedIPv4?: string;
  readonly embedding?: IPv4Embedding;
  /** Plain words without the address itself, e.g. "a loopback address". */
  readonly description: string;
}

const DESCRIPTIONS: Record<AddressRange, string> = {
  public: "a public address",
  invalid: "not a valid IP address",
  unspecified: "an unspecified ('this host') address",
  loopback: "a loopback address",
  private: "a private-network address",
  carrierGradeNat: "a carrier-grade NAT address",
  linkLocal: "a link-local address",
  ietfProtocol: "an IETF protocol-assignment address",
  documentation: "a documentation-only address",
  relay6to4: "a 6to4 relay anycast address",
  benchmarking: "a benchmarking address",
  multicast: "a multicast address",
  reserved: "a reserved address",
  broadcast: "the broadcast address",
  ipv4Compatible: "a deprecated IPv4-compatible IPv6 address",
  uniqueLocal: "a unique-local IPv6 address",
  siteLocal: "a deprecated site-local IPv6 address",
  discard: "a discard-only IPv6 address",
  nat64Local: "a local-use NAT64 address",
  teredo: "a Teredo tunnel address",
  "6to4": "a 6to4 tunnel address",
  segmentRouting: "a segment-routing IPv6 address",
  notGlobalUnicast: "an IPv6 address outside global unicast space",
  special: "a special-purpose address",
};

type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];
const table = (rows: [string, AddressRange][]): [Cidr, AddressRange][] =>
  rows.map(([cidr, range]) => [ipaddr.parseCIDR(cidr), range]);

// Our own list (IANA special-purpose registries) rather than ipaddr's range() names, so a
// library update can never silently turn a blocked block public. Order: most specific first.
const IPV4_RANGES = table([
  ["255.255.255.255/32", "broadcast"],
  ["0.0.0.0/8", "unspecified"],
  ["10.0.0.0/8", "private"],
  ["100.64.0.0/10", "carrierGradeNat"],
  ["127.0.0.0/8", "loopback"],
  ["169.254.0.0/16", "linkLocal"],
  ["172.16.0.0/12", "private"],
  ["192.0.0.0/24", "ietfProtocol"],
  ["192.0.2.0/24", "documentation"],
  ["192.88.99.0/24", "relay6to4"],
  ["192.168.0.0/16", "private"],
  ["198.18.0.0/15", "benchmarking"],
  ["198.51.100.0/24", "documentation"],
  ["203.0.113.0/24", "documentation"],
  ["224.0.0.0/4", "multicast"],
  ["240.0.0.0/4", "reserved"],
]);

// Ranges judged by the IPv4 address they carry (RFC 4291 mapped, RFC 6145 SIIT, RFC 6052 NAT64).
// The text prefix writes the address in the dotted RFC 5952 form (`::ffff:127.0.0.1`).
const EMBEDDINGS: [Cidr, IPv4Embedding, string][] = [
  [ipaddr.parseCIDR("::ffff:0:0/96"), "ipv4Mapped", "::ffff:"],
  [ipaddr.parseCIDR("::ffff:0:0:0/96"), "siit", "::ffff:0:"],
  [ipaddr.parseCIDR("64:ff9b::/96"), "nat64", "64:ff9b::"],
];

const IPV6_RANGES = table([
  ["::/128", "unspecified"],
  ["::1/128", "loopback"],
  ["::/96", "ipv4Compatible"],
  ["64:ff9b:1::/48", "nat64Local"],
  ["100::/64", "discard"],
  ["fc00::/7", "uniqueLocal"],
  ["fe80::/10", "linkLocal"],
  ["fec0::/10", "siteLocal"],
  ["ff00::/8", "multicast"],
  ["2001::/32", "teredo"],
  ["2001::/23", "ietfProtocol"],
  ["2001:db8::/32", "documentation"],
  ["2002::/16", "6to4"],
  ["3fff::/20", "documentation"],
  ["5f00::/16", "segmentRouting"],
]);
const GLOBAL_UNICAST = ipaddr.parseCIDR("2000::/3");

const verdict = (
  address: string,
  range: AddressRange,
  extra: Partial<AddressVerdict> = {},
): AddressVerdict => ({
  address,
  public: range === "public",
  range,
  description: DESCRIPTIONS[range],
  ...extra,
});

/** Removes brackets and a zone id (`fe80::1%eth0`): the zone never changes which range it is. */
export const bareAddress = (input: string): string => {
  let text = input.trim();
  if (text.startsWith("[") && text.endsWith("]")) text = text.slice(1, -1);
  const zone = text.indexOf("%");
  return zone === -1 ? text : text.slice(0, zone);
};

const lookupRange = (ip: ipaddr.IPv4 | ipaddr.IPv6, rows: [Cidr, AddressRange][]): AddressRange | undefined =>
  rows.find(([cidr]) => cidr[0].kind() === ip.kind() && ip.match(cidr))?.[1];

const classifyIPv4 = (ip: ipaddr.IPv4): AddressVerdict => {
  const text = ip.toString();
  const listed = lookupRange(ip, IPV4_RANGES);
  if (listed) return verdict(text, listed);
  // Defence in depth: anything ipaddr.js knows as special (AS112, AMT, ...) is not a webhook host.
  return verdict(text, ip.range() === "unicast" ? "public" : "special");
};

const classifyIPv6 = (ip: ipaddr.IPv6): AddressVerdict => {
  const embedded = EMBEDDINGS.find(([cidr]) => ip.match(cidr));
  if (embedded) {
    const [, embedding, prefix] = embedded;
    // The last 32 bits are the IPv4 address the packet really reaches: inherit its verdict.
    const parts = ip.parts;
    const high = parts[6] ?? 0;
    const low = parts[7] ?? 0;
    const inner = new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
    const judged = classifyIPv4(inner);
    return verdict(prefix + judged.address, judged.range, { embeddedIPv4: judged.address, embedding });
  }
  const text = ip.toRFC5952String();
  const listed = lookupRange(ip, IPV6_RANGES);
  if (listed) return verdict(text, listed);
  if (!ip.match(GLOBAL_UNICAST)) return verdict(text, "notGlobalUnicast");
  return verdict(text, ip.range() === "unicast" ? "public" : "special");
};

/**
 * Rewrites a dotted IPv4 tail as two hex groups (`::127.0.0.1` → `::7f00:1`). ipaddr.js 2.5
 * reads `::a.b.c.d` as the IPv4-mapped `::ffff:a.b.c.d`, which is a different address: an
 * IPv4-compatible `::8.8.8.8` would pass as public 8.8.8.8. Input was validated by net.isIP.
 */
const hexTail = (text: string): string => {
  const match = /^(.*:)(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (!match) return text;
  const [a, b, c, d] = match.slice(2).map(Number) as [number, number, number, number];
  return `${match[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
};

/**
 * Says which range an address is in and whether it is public. Accepts only canonical text
 * (dotted quad or IPv6, optional brackets and zone id): odd IPv4 spellings such as `127.1` are
 * "invalid" here because resolvers and sockets never produce them, and URLs canonicalise them.
 */
export const classifyAddress = (input: string): AddressVerdict => {
  // A resolver is injectable: never trust that it answered strings.
  if (typeof input !== "string") return verdict(String(input), "invalid");
  const text = bareAddress(input);
  const family = isIP(text);
  if (family === 4) return classifyIPv4(ipaddr.IPv4.parse(text));
  if (family === 6) return classifyIPv6(ipaddr.IPv6.parse(hexTail(text)));
  return verdict(input, "invalid");
};

/** True only for an address that is reachable on the public Internet. */
export const isPublicAddress = (input: string): boolean => classifyAddress(input).public;
