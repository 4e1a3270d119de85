import ipaddr from "ipaddr.js";
import { WebhookError } from "../errors.js";
import { type Resolver, systemResolver } from "./resolver.js";

/** The push profile's limits (§6 rule 1): 10 seconds, 4 KB, port 443. */
export const PRODUCTION_TIMEOUT_MS = 10_000;
export const MAX_RESPONSE_BYTES = 4096;
export const HTTPS_PORT = 443;

/**
 * Where and how the egress may post, as plain data. Build one with `productionPolicy()` or,
 * only by name, `developmentPolicy()`; there is deliberately no default policy.
 */
export interface EgressPolicy {
  readonly mode: "production" | "development";
  readonly protocols: readonly ("https:" | "http:")[];
  /** The ports a URL may use, or "any". */
  readonly ports: readonly number[] | "any";
  readonly allowIpLiterals: boolean;
  /** Refuse single-label names and `localhost`: they resolve through local search lists. */
  readonly requireDomainName: boolean;
  readonly allowLoopback: boolean;
  /** Lower-case names without a trailing dot; `*.example.com` also matches every subdomain. */
  readonly blockedHosts: readonly string[];
  /** CIDR blocks refused even when public; they win over `allowSubnets`. */
  readonly blockedSubnets: readonly string[];
  /** CIDR blocks allowed even when not public (tests, private deployments). */
  readonly allowSubnets: readonly string[];
  readonly timeoutMs: number;
  readonly maxResponseBytes: number;
  /** An extra trusted CA, added to Node's built-in roots. */
  readonly ca?: string | Buffer;
  readonly resolver: Resolver;
  /** Wall clock in milliseconds, for HTTP-date Retry-After values. */
  readonly now: () => number;
}

export interface PolicyOptions {
  blockedHosts?: readonly string[];
  blockedSubnets?: readonly string[];
  allowSubnets?: readonly string[];
  ca?: string | Buffer;
  /** Lower than 10 000 for tests; a higher value is refused. */
  timeoutMs?: number;
  resolver?: Resolver;
  now?: () => number;
}

export interface ProductionPolicyOptions extends PolicyOptions {
  /**
   * The one port allowed instead of 443. For tests that cannot bind port 443 in parallel;
   * a production deployment leaves it unset (push profile §6 rule 1).
   */
  port?: number;
}

const refuse = (message: string): never => {
  throw new WebhookError("ERR_EGRESS_POLICY", message);
};

/** Host names compare case-insensitively and without the trailing root dot. */
export const normaliseHost = (host: string): string => host.trim().toLowerCase().replace(/\.+$/, "");

const normaliseSubnet = (text: string): string => {
  const trimmed = text.trim();
  const withBits = trimmed.includes("/") ? trimmed : `${trimmed}/${trimmed.includes(":") ? 128 : 32}`;
  if (!ipaddr.isValidCIDR(withBits)) refuse(`"${trimmed}" is not a subnet in CIDR notation`);
  const [address, bits] = ipaddr.parseCIDR(withBits);
  return `${address.toString()}/${bits}`;
};

const checkTimeout = (timeoutMs: number | undefined): number => {
  if (timeoutMs === undefined) return PRODUCTION_TIMEOUT_MS;
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > PRODUCTION_TIMEOUT_MS) {
    refuse(`timeoutMs must be a whole number from 1 to ${PRODUCTION_TIMEOUT_MS}`);
  }
  return timeoutMs;
};

const common = (options: PolicyOptions) => ({
  blockedHosts: Object.freeze((options.blockedHosts ?? []).map(normaliseHost).filter((h) => h !== "")),
  blockedSubnets: Object.freeze((options.blockedSubnets ?? []).map(normaliseSubnet)),
  allowSubnets: Object.freeze((options.allowSubnets ?? []).map(normaliseSubnet)),
  timeoutMs: checkTimeout(options.timeoutMs),
  maxResponseBytes: MAX_RESPONSE_BYTES,
  ...(options.ca === undefined ? {} : { ca: options.ca }),
  resolver: options.resolver ?? systemResolver,
  now: options.now ?? Date.now,
});

/** Push profile §6 rule 1: https, port 443, a domain name, public addresses only, 10 s, 4 KB. */
export const productionPolicy = (options: ProductionPolicyOptions = {}): EgressPolicy => {
  const port = options.port ?? HTTPS_PORT;
  if (!Number.isInteger(port) || port < 1 || port > 65_535) refuse("port must be a TCP port number");
  return Object.freeze({
    mode: "production",
    protocols: Object.freeze(["https:"] as const),
    ports: Object.freeze([port]),
    allowIpLiterals: false,
    requireDomainName: true,
    allowLoopback: false,
    ...common(options),
  });
};

/**
 * For a developer's own machine: also http, any port, IP literals and loopback addresses. Every
 * other non-public range stays blocked. Never a default: a caller must ask for it by name.
 */
export const developmentPolicy = (options: PolicyOptions = {}): EgressPolicy =>
  Object.freeze({
    mode: "development",
    protocols: Object.freeze(["https:", "http:"] as const),
    ports: "any",
    allowIpLiterals: true,
    requireDomainName: false,
    allowLoopback: true,
    ...common(options),
  });
