import { AGENT_CARD_PATH, type AgentCard } from "@a2a-js/sdk";
import {
  type AgentCardResolver,
  type Client,
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from "@a2a-js/sdk/client";
import { type EgressPolicy, egressFetch } from "@doorbell/webhooks";
import { InboxError } from "../inbox/errors.js";
import { speaksAgreements } from "./agreement-card.js";
import { checkCardEndpoints, defaultCardPolicy, fetchAgentCardJson } from "./card-fetch.js";

/**
 * Finding the other side's agent (agent-intents/1, "How messages travel in A2A"): "The card
 * address comes from the domain at /.well-known/agent-card.json or from from.card in an earlier
 * message." A sender "that finds the other side agent card declares this profile as an extension,
 * with one skill named agreements, sends over A2A instead of email."
 *
 * The client speaks whichever version the card declares: the SDK's resolver reads a v0.3 card
 * (`url`, `protocolVersion` 0.3) as well as a v1.0 one, and its JSON-RPC factory then picks the
 * v0.3 transport (`message/send`, `tasks/get`, `tasks/cancel`) or the v1.0 one from the interface
 * the card prefers.
 */

export interface RemoteAgent {
  readonly client: Client;
  readonly card: AgentCard;
}

export interface PeerDiscoveryOptions {
  /** The card address of a domain. Default `https://<domain>/.well-known/agent-card.json`. */
  readonly cardUrlOf?: (domain: string) => string;
  /**
   * The egress policy the card is fetched under, and its endpoints judged by. Default
   * `productionPolicy()` (https, port 443, public addresses, 10 s); `developmentPolicy()` also
   * allows http and loopback, for a developer's machine and tests.
   */
  readonly policy?: EgressPolicy;
  /**
   * For the JSON-RPC calls to the endpoint the card names (tests record them). Default
   * `egressFetch(policy)`: the same guard as the card, so an endpoint name that resolves to a
   * private address is refused at call time, redirects are not followed, and each call has the
   * policy's deadline. The card itself always comes through the egress.
   */
  readonly fetchImpl?: typeof fetch;
}

export type ChannelChoice =
  | { readonly channel: "a2a"; readonly cardUrl: string; readonly agent: RemoteAgent }
  | { readonly channel: "email"; readonly reason: string };

// One guarded fetch per policy: each holds the policy's connection pool.
const peerFetches = new WeakMap<EgressPolicy, typeof fetch>();
const peerFetchOf = (policy: EgressPolicy): typeof fetch => {
  let found = peerFetches.get(policy);
  if (found === undefined) {
    found = egressFetch(policy);
    peerFetches.set(policy, found);
  }
  return found;
};

const defaultCardUrl = (domain: string): string => `https://${domain}/${AGENT_CARD_PATH}`;

/** The card address for a recipient: `from.card` of an earlier message, else the address's domain. */
export const peerCardUrl = (
  address: string,
  fromCard?: string,
  options: PeerDiscoveryOptions = {},
): string => {
  if (fromCard !== undefined) return fromCard;
  const domain = address.slice(address.lastIndexOf("@") + 1).toLowerCase();
  if (domain === "" || !address.includes("@")) throw new RangeError(`${address} is not an e-mail address`);
  return (options.cardUrlOf ?? defaultCardUrl)(domain);
};

/**
 * Reads the card at `cardUrl` (v0.3 or v1.0) through the SSRF-safe egress and makes a JSON-RPC
 * client of the version it declares. Throws an InboxError `ERR_A2A_CARD` when the card cannot be
 * fetched under the policy or names an endpoint the policy refuses.
 */
export async function connectToPeer(
  cardUrl: string,
  options: PeerDiscoveryOptions = {},
): Promise<RemoteAgent> {
  const legacyCompat = { enabled: true };
  const policy = options.policy ?? defaultCardPolicy();
  const withFetch = { fetchImpl: options.fetchImpl ?? peerFetchOf(policy) };
  const resolver = new DefaultAgentCardResolver({ legacyCompat, ...withFetch });
  // The SDK's resolver only turns the JSON into its model (a v0.3 card into v1.0 interfaces).
  const card = resolver.normalizeAgentCard(await fetchAgentCardJson(cardUrl, policy));
  checkCardEndpoints(card, cardUrl, policy);
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      cardResolver: resolver as AgentCardResolver,
      transports: [new JsonRpcTransportFactory({ legacyCompat, ...withFetch })],
    }),
  );
  return { client: await factory.createFromAgentCard(card), card };
}

/**
 * A2A when the recipient's card (from `fromCard`, else its domain) declares agent-intents/1 with
 * the agreements skill; e-mail otherwise, with the reason (no card, an unreadable one, or a card
 * without the profile).
 */
export async function chooseChannel(
  to: string,
  options: PeerDiscoveryOptions & { readonly fromCard?: string } = {},
): Promise<ChannelChoice> {
  let cardUrl: string;
  try {
    cardUrl = peerCardUrl(to, options.fromCard, options);
  } catch (error) {
    return { channel: "email", reason: (error as Error).message };
  }
  let agent: RemoteAgent;
  try {
    agent = await connectToPeer(cardUrl, options);
  } catch (error) {
    // The egress's refusal already names the address and says why in plain words.
    if (error instanceof InboxError) return { channel: "email", reason: error.message };
    const why = error instanceof Error ? error.message : String(error);
    return { channel: "email", reason: `no agent card could be read at ${cardUrl} (${why})` };
  }
  if (!speaksAgreements(agent.card)) {
    return {
      channel: "email",
      reason: `the agent card at ${cardUrl} does not declare agent-intents/1 with the agreements skill`,
    };
  }
  return { channel: "a2a", cardUrl, agent };
}
