/**
 * Every name and address the holder knows as its own, for the egress's own-host rule (push
 * profile §6 rule 1: a doorbell never rings the holder itself): the public URL's host and its
 * `www.` twin, the extra host names it answers for, and the addresses of this machine's network
 * interfaces, which include every address it can listen on. Loopback and private addresses are
 * refused by the production policy anyway; naming them here costs nothing.
 */
import { isIP } from "node:net";
import os from "node:os";
import { hostnameOf } from "@doorbell/mcp-endpoint";

const bare = (name: string): string => name.replace(/^\[|\]$/g, "");

/** The twin a site is usually reachable by too: `www.<host>` for `<host>`, and the reverse. */
const wwwTwin = (host: string): string => (host.startsWith("www.") ? host.slice(4) : `www.${host}`);

export interface OwnHosts {
  /** Host names, lower case, for the policy's `blockedHosts`. */
  readonly names: readonly string[];
  /** IP addresses, for the policy's `blockedSubnets`. */
  readonly addresses: readonly string[];
}

export function ownHosts(publicUrl: string, allowedHosts: readonly string[] = []): OwnHosts {
  const names = new Set<string>();
  const addresses = new Set<string>();
  for (const given of [new URL(publicUrl).host, ...allowedHosts]) {
    const name = hostnameOf(given);
    if (name === undefined) continue;
    const host = bare(name);
    if (isIP(host) !== 0) addresses.add(host);
    else if (host !== "") {
      names.add(host);
      names.add(wwwTwin(host));
    }
  }
  for (const entries of Object.values(os.networkInterfaces())) {
    for (const entry of entries ?? []) addresses.add(entry.address.replace(/%.*$/, ""));
  }
  return { names: [...names], addresses: [...addresses] };
}
