import ipaddr from "ipaddr.js";
import { type AddressVerdict, classifyAddress } from "./address.js";
import type { EgressPolicy } from "./policy.js";

/** Whether one address may be connected to under a policy, and why not in plain words. */
export interface AddressJudgement {
  readonly allowed: boolean;
  readonly verdict: AddressVerdict;
  /** Plain words without the address, safe to show to whoever registered the URL. */
  readonly reason: string;
}

const parsedSubnets = new Map<string, [ipaddr.IPv4 | ipaddr.IPv6, number]>();
const subnet = (cidr: string): [ipaddr.IPv4 | ipaddr.IPv6, number] => {
  let parsed = parsedSubnets.get(cidr);
  if (!parsed) {
    parsed = ipaddr.parseCIDR(cidr);
    parsedSubnets.set(cidr, parsed);
  }
  return parsed;
};

const inAny = (addresses: readonly string[], subnets: readonly string[]): boolean =>
  addresses.some((text) => {
    const ip = ipaddr.parse(text);
    return subnets.some((cidr) => {
      const range = subnet(cidr);
      return range[0].kind() === ip.kind() && ip.match(range);
    });
  });

/**
 * Judges an address (as resolved, or as a socket reports it). Order: invalid → refused;
 * blockedSubnets → refused; public → allowed; allowSubnets → allowed; loopback in development →
 * allowed; everything else refused. An embedded IPv4 address counts for the subnet lists too.
 */
export const judgeAddress = (policy: EgressPolicy, address: string): AddressJudgement => {
  const verdict = classifyAddress(address);
  if (verdict.range === "invalid") return { allowed: false, verdict, reason: "it is not a valid IP address" };
  const candidates = verdict.embeddedIPv4 ? [verdict.address, verdict.embeddedIPv4] : [verdict.address];
  if (inAny(candidates, policy.blockedSubnets)) {
    return { allowed: false, verdict, reason: "it is in a subnet this server blocks" };
  }
  if (verdict.public || inAny(candidates, policy.allowSubnets)) return { allowed: true, verdict, reason: "" };
  // NAT64 loopback would leave the machine through the translator: never "local".
  if (policy.allowLoopback && verdict.range === "loopback" && verdict.embedding !== "nat64") {
    return { allowed: true, verdict, reason: "" };
  }
  return { allowed: false, verdict, reason: `it is ${verdict.description}` };
};

export const isAddressAllowed = (policy: EgressPolicy, address: string): boolean =>
  judgeAddress(policy, address).allowed;
