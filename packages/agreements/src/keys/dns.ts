import { resolveTxt } from "node:dns/promises";
import { DNS_VOUCH_PREFIX } from "../constants.js";

/** `dns.promises.resolveTxt`'s contract: each record as its chunks. Injectable for tests. */
export type TxtResolver = (name: string) => Promise<string[][]>;

export const systemTxtResolver: TxtResolver = (name) => resolveTxt(name);

/**
 * "A domain owner can also vouch for a party with a DNS TXT record named
 * _agent-agreements.<domain> whose value is the party id." Chunks of one record are joined;
 * any record equal to the party id vouches. No answer, or a failed lookup, vouches for nothing.
 */
export const domainVouchesFor = async (
  resolver: TxtResolver,
  domain: string,
  party: string,
): Promise<boolean> => {
  try {
    const records = await resolver(`${DNS_VOUCH_PREFIX}${domain}`);
    return records.some((chunks) => chunks.join("").trim() === party);
  } catch {
    return false;
  }
};
