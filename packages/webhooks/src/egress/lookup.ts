import type { LookupAddress, LookupOptions } from "node:dns";
import { isIP, type LookupFunction } from "node:net";
import type { EgressPolicy } from "./policy.js";
import { EgressRefusal, ResolutionFailure } from "./refusal.js";
import { judgeAddress } from "./verdict.js";

/**
 * Resolves a name once and vets every answer. One non-allowed answer refuses the whole name:
 * an attacker who mixes a public and a private address must not win a Happy Eyeballs race.
 */
export const resolveVetted = async (policy: EgressPolicy, hostname: string): Promise<LookupAddress[]> => {
  let answers: readonly { address: string }[];
  try {
    answers = await policy.resolver(hostname);
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    throw new ResolutionFailure(typeof code === "string" ? code : "ENOTFOUND");
  }
  if (!Array.isArray(answers) || answers.length === 0) throw new ResolutionFailure("ENOTFOUND");
  return answers.map(({ address }) => {
    const judged = judgeAddress(policy, address);
    if (!judged.allowed) {
      throw new EgressRefusal(
        "blocked_address",
        `the host name resolved to an address that is refused: ${judged.reason}`,
      );
    }
    // The canonical text and its real family, never what the resolver claimed.
    const vetted = judged.verdict.address;
    return { address: vetted, family: isIP(vetted) };
  });
};

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * A `lookup` for net/tls.connect that answers only vetted addresses, so the address connected
 * to is the one checked (no second resolution to rebind). Node 20's Happy Eyeballs asks with
 * `all: true` and needs the array form; the three-argument form is kept for `all: false`.
 */
export const vettedLookup = (policy: EgressPolicy): LookupFunction => {
  const lookup = (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    resolveVetted(policy, hostname).then(
      (addresses) => {
        const wanted = options.family;
        const family = wanted === 4 || wanted === "IPv4" ? 4 : wanted === 6 || wanted === "IPv6" ? 6 : 0;
        const usable = family === 0 ? addresses : addresses.filter((a) => a.family === family);
        const first = usable[0];
        // Called on the next tick so an exception in Node's callback is not turned into a rejection.
        if (!first) process.nextTick(callback, new ResolutionFailure("ENOTFOUND"), "");
        else if (options.all) process.nextTick(callback, null, usable);
        else process.nextTick(callback, null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => process.nextTick(callback, error, ""),
    );
  };
  return lookup as LookupFunction;
};
