import type { AgentCard } from "@a2a-js/sdk";
import { checkUrl, type EgressPolicy, getJson, productionPolicy } from "@doorbell/webhooks";
import { InboxError } from "../inbox/errors.js";

/**
 * Fetching another agent's card. The address comes from a recipient's domain or from `from.card`
 * of a message, that is from someone else, so it goes through the SSRF-safe egress like a key page
 * or a doorbell: the URL and every address it resolves to are judged by the policy (no private,
 * link-local or metadata addresses; loopback only under a development policy), redirects are
 * never followed, one deadline covers the whole exchange and the body is capped.
 */

/** The largest card read: real cards are a few kilobytes. */
export const MAX_AGENT_CARD_BYTES = 64 * 1024;

// Made on first use, not at import: a process that never discovers a peer builds no policy.
let defaultPolicy: EgressPolicy | undefined;

/** The policy cards are fetched under when the caller names none: https, 443, public addresses, 10 s. */
export const defaultCardPolicy = (): EgressPolicy => {
  defaultPolicy ??= productionPolicy();
  return defaultPolicy;
};

const refuse = (message: string): never => {
  throw new InboxError("ERR_A2A_CARD", message);
};

/**
 * The card's JSON at `cardUrl`, read under `policy`; throws an InboxError `ERR_A2A_CARD` saying
 * why (a refused address, a timeout, a redirect, too large, not JSON). The text is the egress's
 * own words and the address given, never anything the peer sent.
 */
export async function fetchAgentCardJson(cardUrl: string, policy: EgressPolicy): Promise<unknown> {
  const result = await getJson({ url: cardUrl, policy, maxBytes: MAX_AGENT_CARD_BYTES });
  if (!result.ok) return refuse(`the agent card at ${cardUrl} could not be fetched: ${result.reason}`);
  if (result.json === null || typeof result.json !== "object" || Array.isArray(result.json)) {
    return refuse(`the agent card at ${cardUrl} is not a JSON object`);
  }
  return result.json;
}

/**
 * The endpoints a card names are addresses from the peer too. Each is judged by the same policy
 * before the client is made (scheme, port, host name, IP literal), so a bad card is refused at
 * once; the addresses a name resolves to are judged when the calls are made (`egressFetch`).
 */
export function checkCardEndpoints(card: AgentCard, cardUrl: string, policy: EgressPolicy): void {
  for (const entry of card.supportedInterfaces ?? []) {
    const checked = checkUrl(entry.url, policy);
    if (!checked.ok) {
      refuse(`the agent card at ${cardUrl} names an endpoint the egress policy refuses: ${checked.reason}`);
    }
  }
}
