// Card discovery goes through the SSRF-safe egress (issue 18): a card address comes from someone
// else (the recipient's domain, or from.card of a message), so a name that resolves to a private
// or link-local address, a private IP literal, an endpoint on the card at such an address, an
// oversized card and plain http in production are all refused with the reason in plain words,
// while loopback works under the development policy. Real HTTP on loopback; the names that must
// resolve to private addresses are answered by the policy's injectable resolver.
import { closeEgress, developmentPolicy, type EgressPolicy, productionPolicy } from "@doorbell/webhooks";
import { afterAll, describe, expect, it } from "vitest";
import { agreementAgentCard } from "../src/a2a/agreement-card.js";
import { MAX_AGENT_CARD_BYTES } from "../src/a2a/card-fetch.js";
import { chooseChannel, connectToPeer } from "../src/a2a/peer-discovery.js";
import { InboxError } from "../src/inbox/errors.js";
import type { LimitsPolicy } from "../src/inbox/limits.js";
import { type A2AAgent, LOOPBACK_POLICY, startA2AAgent } from "./a2a-agents.js";
import { serveJson } from "./card-server.js";
import { closedAfterEach, quoteDesks, twoParties } from "./quote-thread.js";

const { seller, resolveKey } = await twoParties();
const running = closedAfterEach<A2AAgent>();
const sellerLimits: LimitsPolicy = { version: "s-1", types: ["quote"], maxTotal: { EUR: "500000" } };

/** A policy whose DNS answers every name with one address. */
const resolvingTo = (address: string, make: typeof developmentPolicy = developmentPolicy): EgressPolicy =>
  make({ resolver: async () => [{ address, family: address.includes(":") ? 6 : 4 }] });

const policies: EgressPolicy[] = [];
const policy = (made: EgressPolicy) => {
  policies.push(made);
  return made;
};
afterAll(async () => {
  await Promise.all(policies.map((p) => closeEgress(p)));
});

/** The refusal connectToPeer gives, with its code. */
const refusal = async (cardUrl: string, used: EgressPolicy | undefined): Promise<InboxError> => {
  const error = await connectToPeer(cardUrl, used === undefined ? {} : { policy: used }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(InboxError);
  expect((error as InboxError).code).toBe("ERR_A2A_CARD");
  return error as InboxError;
};

const cardOf = (endpoint: string) =>
  agreementAgentCard({ name: "Peer agent", description: "quotes", url: endpoint, version: "1.0.0" });

describe("fetching another agent's card through the egress", () => {
  it("refuses a card address whose name resolves to a link-local (metadata) address", async () => {
    const used = policy(resolvingTo("169.254.169.254", productionPolicy));
    const error = await refusal("https://agents.seller.example/.well-known/agent-card.json", used);
    expect(error.message).toBe(
      "the agent card at https://agents.seller.example/.well-known/agent-card.json could not be fetched: the host name resolved to an address that is refused: it is a link-local address",
    );
  });

  it("refuses a name resolving to a private address, and a private IP literal, even in development", async () => {
    const used = policy(resolvingTo("10.20.30.40"));
    expect((await refusal("http://cards.internal.example:8080/card.json", used)).message).toMatch(
      /could not be fetched: the host name resolved to an address that is refused: it is a private-network address$/,
    );
    expect(
      (await refusal("http://192.168.1.20/.well-known/agent-card.json", LOOPBACK_POLICY)).message,
    ).toMatch(/could not be fetched: the URL's IP address is not allowed: it is a private-network address$/);
  });

  it("reads a card on loopback under the development policy, and refuses it under the default", async () => {
    const s = await startA2AAgent({
      party: seller,
      policy: sellerLimits,
      respond: quoteDesks("100", (n) => n + 60),
      resolveKey,
    });
    running.push(s);
    const { card } = await connectToPeer(s.cardUrl, { policy: LOOPBACK_POLICY });
    expect(card.name).toBe(`${seller.org} agent`);
    // No policy named: production (https, port 443, a domain name, public addresses).
    expect((await refusal(s.cardUrl, undefined)).message).toMatch(
      /could not be fetched: the URL must use https$/,
    );
  });

  it("refuses a card that names its endpoint at a link-local address, before calling it", async () => {
    const served = await serveJson(cardOf("http://169.254.169.254/a2a/jsonrpc"));
    try {
      const error = await refusal(served.url, LOOPBACK_POLICY);
      expect(error.message).toBe(
        `the agent card at ${served.url} names an endpoint the egress policy refuses: the URL's IP address is not allowed: it is a link-local address`,
      );
      expect(served.hits()).toBe(1);
    } finally {
      await served.close();
    }
  });

  it("refuses the calls to an endpoint whose name resolves to a private address, at call time", async () => {
    // The name passes the card check (it is a name, not an address); what it resolves to is judged
    // when the JSON-RPC call is made, through the same egress as the card.
    const served = await serveJson(cardOf("http://a2a.peer.example:8080/a2a/jsonrpc"));
    try {
      const { client } = await connectToPeer(served.url, { policy: policy(resolvingTo("10.20.30.40")) });
      const error = await client
        .getTask({ tenant: "", id: "00000000-0000-4000-8000-000000000000", historyLength: undefined })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      const chain: string[] = [];
      for (let e = error as { message?: string; cause?: unknown } | undefined; e; e = e.cause as typeof e)
        chain.push(String(e.message));
      expect(chain.join(" <- ")).toContain(
        "the host name resolved to an address that is refused: it is a private-network address",
      );
    } finally {
      await served.close();
    }
  });

  it("refuses a card longer than the cap without reading the rest", async () => {
    const card = cardOf("http://127.0.0.1:9/a2a/jsonrpc");
    const served = await serveJson({ ...card, description: "x".repeat(MAX_AGENT_CARD_BYTES) });
    try {
      expect((await refusal(served.url, LOOPBACK_POLICY)).message).toMatch(
        new RegExp(
          `could not be fetched: the answer is longer than ${MAX_AGENT_CARD_BYTES} bytes or broke off$`,
        ),
      );
    } finally {
      await served.close();
    }
  });

  it("falls back to e-mail with the refusal as the reason", async () => {
    const used = policy(resolvingTo("169.254.169.254"));
    const choice = await chooseChannel(seller.address, {
      policy: used,
      fromCard: "http://peer.example/card.json",
    });
    expect(choice).toEqual({
      channel: "email",
      reason:
        "the agent card at http://peer.example/card.json could not be fetched: the host name resolved to an address that is refused: it is a link-local address",
    });
  });
});
