/** Where the holder may ring doorbells and fetch key pages from. */
import { developmentPolicy, type EgressPolicy, productionPolicy } from "@doorbell/webhooks";
import { ownHosts } from "../own-hosts.js";

/**
 * Where the holder may ring doorbells. Production (the push profile's rule 1: https on 443, public
 * addresses only, never one of the holder's own names or addresses: `ownHosts`) unless asked for
 * development, which also allows http and loopback endpoints for a demo on one machine.
 */
export function holderEgressPolicy(
  mode: "production" | "development",
  publicUrl: string,
  allowedHosts: readonly string[] = [],
): EgressPolicy {
  if (mode === "development") return developmentPolicy();
  const own = ownHosts(publicUrl, allowedHosts);
  return productionPolicy({ blockedHosts: own.names, blockedSubnets: own.addresses });
}
