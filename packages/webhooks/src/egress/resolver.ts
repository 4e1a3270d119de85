import { lookup } from "node:dns/promises";

/** One address a host name resolves to. `family` is advisory: the egress recomputes it. */
export interface ResolvedAddress {
  readonly address: string;
  readonly family: number;
}

/**
 * Turns a host name into every address it currently has. Injectable so tests (and deployments
 * with their own DNS) decide the answers; the egress calls it exactly once per new connection.
 */
export type Resolver = (hostname: string) => Promise<readonly ResolvedAddress[]>;

/** The operating system's resolver, every answer in the order it gave them (no reordering). */
export const systemResolver: Resolver = (hostname) => lookup(hostname, { all: true, verbatim: true });
