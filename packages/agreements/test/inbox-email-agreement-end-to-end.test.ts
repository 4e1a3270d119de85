import http from "node:http";
import type { AddressInfo } from "node:net";
import { closeEgress, developmentPolicy, toNodeHandler } from "@doorbell/webhooks";
import { describe, expect, it } from "vitest";
import { checkRecord } from "../src/check/check.js";
import type { Responder } from "../src/inbox/agent-inbox.js";
import type { LimitsPolicy } from "../src/inbox/limits.js";
import { createKeyPageFetcher, createKeyPageHandler, createKeyResolver } from "../src/keys/index.js";
import type { AgreementRecord } from "../src/record/types.js";
import { type RunningAgent, startAgent } from "./inbox-agents.js";
import { dnsZone, makeParty, type Party } from "./inbox-parties.js";
import { ASK, acceptQuotes, closedAfterEach, counterQuote, quoteDesks, twoParties } from "./quote-thread.js";

const { seller, buyer, resolveKey } = await twoParties();
const running = closedAfterEach<RunningAgent>();

const sellerLimits: LimitsPolicy = {
  version: "s-3",
  types: ["quote"],
  maxTotal: { EUR: "500000" },
  maxOfferOpenSeconds: 7200,
};
const buyerLimits: LimitsPolicy = {
  version: "b-7",
  types: ["ask_quote", "accept"],
  maxTotal: { EUR: "200000" },
};

const quoteAnswer = (amountEach: string) =>
  quoteDesks(amountEach, () => Math.floor(Date.now() / 1000) + 3600);

async function pair(
  options: {
    sellerLimits?: LimitsPolicy;
    sellerRespond?: Responder;
    buyerRespond?: Responder;
    buyerClock?: () => number;
  } = {},
) {
  const zone = dnsZone(seller, buyer);
  const ports = new Map<string, number>();
  const route = (domain: string) => ports.get(domain) ?? 0;
  const s = await startAgent({
    party: seller,
    policy: options.sellerLimits ?? sellerLimits,
    respond: options.sellerRespond ?? quoteAnswer("45000"),
    resolveKey,
    clock: Date.now,
    zone,
    route,
  });
  const b = await startAgent({
    party: buyer,
    policy: buyerLimits,
    respond: options.buyerRespond ?? acceptQuotes,
    resolveKey,
    clock: options.buyerClock ?? Date.now,
    zone,
    route,
  });
  running.push(s, b);
  ports.set(seller.domain, s.smtp.port);
  ports.set(buyer.domain, b.smtp.port);
  return { s, b, zone };
}

describe("two agents agree a quote over real SMTP with DKIM", () => {
  it("each side's record checks out with two signatures, answered within the limits", async () => {
    const { s, b, zone } = await pair();
    const sent = await b.inbox.start(ASK, seller.address);
    const thread = sent !== undefined && "message" in sent ? sent.message.thread : "";
    expect(thread).not.toBe("");
    expect(zone.calls).toContain(`TXT ${seller.dkim.selector}._domainkey.${seller.domain}`);
    expect(zone.calls).toContain(`TXT ${buyer.dkim.selector}._domainkey.${buyer.domain}`);
    expect(await s.store.threadState(seller.address, thread)).toEqual({
      state: "agreed",
      channel: "email",
    });
    expect(await b.store.threadState(buyer.address, thread)).toEqual({
      state: "agreed",
      channel: "email",
    });
    for (const [side, store, address] of [
      ["seller", s.store, seller.address],
      ["buyer", b.store, buyer.address],
    ] as const) {
      const record = (await store.record(address, thread)) as AgreementRecord;
      expect(record, side).toBeDefined();
      const result = await checkRecord(record, { resolveKey });
      expect(result, side).toMatchObject({ ok: true, result: "two_signatures" });
    }
    const held = await s.store.thread(seller.address, thread);
    expect(held.map((m) => [m.direction, m.type, m.result])).toEqual([
      ["in", "ask_quote", "signed_and_checked"],
      ["out", "quote", "sent"],
      ["in", "accept", "signed_and_checked"],
    ]);
    const quote = JSON.parse(held[1]?.canonical ?? "{}");
    expect(quote.authority).toEqual({ decided_by: "limits", limits_version: "s-3" });
    expect(s.plain).toEqual([]);
    expect(b.plain).toEqual([]);
  });

  it("a quote over the limits waits for the owner (decided_by owner once approved)", async () => {
    const { s, b } = await pair({ sellerRespond: quoteAnswer("150000") });
    const sent = await b.inbox.start(ASK, seller.address);
    const thread = sent !== undefined && "message" in sent ? sent.message.thread : "";
    expect(await s.store.threadState(seller.address, thread)).toMatchObject({
      state: "waiting_for_owner",
    });
    const [waiting] = await s.inbox.pending();
    expect(waiting?.reasons).toEqual(["the total 600000 EUR is over the limit of 500000 EUR"]);
    // The buyer's own limits stop at 2,000.00 EUR: its accept now waits for its owner.
    await s.inbox.approve(waiting?.id ?? "");
    expect(await b.store.threadState(buyer.address, thread)).toMatchObject({
      state: "waiting_for_owner",
    });
    const [buyerWaiting] = await b.inbox.pending();
    await b.inbox.refuse(buyerWaiting?.id ?? "", "too expensive");
    expect(await s.store.threadState(seller.address, thread)).toMatchObject({ state: "declined" });
    const quote = JSON.parse((await s.store.thread(seller.address, thread))[1]?.canonical ?? "{}");
    expect(quote.authority).toEqual({ decided_by: "owner" });
  });

  it("an accept signed after the offer expired is refused with its reason", async () => {
    let ahead = 0;
    const buyerRespond: Responder = async (ctx) => {
      ahead = 2 * 3600 * 1000; // the buyer's owner answers two hours later, after the quote's exp
      return acceptQuotes(ctx);
    };
    const { s, b } = await pair({ buyerRespond, buyerClock: () => Date.now() + ahead });
    const sent = await b.inbox.start(ASK, seller.address);
    const thread = sent !== undefined && "message" in sent ? sent.message.thread : "";
    // The buyer's own lifecycle refuses to accept the expired quote: no accept leaves.
    expect(b.refused).toEqual(["the offer had expired when it was accepted"]);
    expect(await s.store.threadState(seller.address, thread)).toMatchObject({
      state: "input_required",
    });
    expect(await s.store.record(seller.address, thread)).toBeUndefined();
  });

  it("an accept of an offer that was replaced is refused", async () => {
    const quotes: string[] = [];
    const buyerRespond: Responder = async ({ message }) => {
      if (message.type === "quote") quotes.push(message.id);
      return undefined; // the buyer's agent waits
    };
    const { s, b } = await pair({ buyerRespond });
    const sent = await b.inbox.start(ASK, seller.address);
    const thread = sent !== undefined && "message" in sent ? sent.message.thread : "";
    const held = await s.store.thread(seller.address, thread);
    const first = held.find((m) => m.type === "quote");
    const counter = await s.inbox.complete(
      counterQuote(first?.id),
      buyer.address,
      held.find((m) => m.type === "ask_quote"),
    );
    await s.inbox.sendMessage(counter, { decided_by: "owner" });
    expect(quotes).toHaveLength(2);
    // The buyer then accepts the first, superseded quote.
    const firstHeld = await b.store.message(buyer.address, quotes[0] ?? "");
    const accept = await b.inbox.complete({ type: "accept", ref: quotes[0] }, seller.address, firstHeld);
    await expect(b.inbox.sendMessage(accept, { decided_by: "owner" })).rejects.toThrow(
      "the offer had been replaced when it was accepted",
    );
    expect(await s.store.record(seller.address, thread)).toBeUndefined();
  });

  it("a record whose terms were changed after sealing does not check out, with the reason", async () => {
    const { s } = await pair();
    const sent = await running[1]?.inbox.start(ASK, seller.address);
    const thread = sent !== undefined && "message" in sent ? sent.message.thread : "";
    const record = structuredClone((await s.store.record(seller.address, thread)) as AgreementRecord);
    (record.terms as { total: { amount: string } }).total.amount = "1";
    const result = await checkRecord(record, { resolveKey });
    expect(result.ok).toBe(false);
    expect(result.result).toBe("does_not_check_out");
    expect(result.ok ? "" : result.reason).toMatch(/^the record was changed after it was sealed/);
  });
});

describe("key pages fetched over real HTTP on loopback", () => {
  it("two agents agree by e-mail and each record checks out against pages served over HTTP (development egress policy)", async () => {
    const requests: string[] = [];
    const pages = new Map<string, Party["page"]>();
    const handler = createKeyPageHandler({ pageOf: (party) => pages.get(party) });
    const keyServer = http.createServer((req, res) => {
      requests.push(`${req.method} ${req.url}`);
      toNodeHandler(handler)(req, res);
    });
    await new Promise<void>((resolve) => keyServer.listen(0, "127.0.0.1", resolve));
    const origin = `http://127.0.0.1:${(keyServer.address() as AddressInfo).port}`;
    // The core's fetcher refuses loopback and http unless given the development policy by name.
    const policy = developmentPolicy({ timeoutMs: 2000 });
    try {
      const s = await makeParty("seller", "pty_sellerparty000000001", 1_700_000_000, origin);
      const b = await makeParty("buyer", "pty_buyerparty0000000001", 1_700_000_000, origin);
      pages.set(s.party, s.page);
      pages.set(b.party, b.page);
      const overHttp = createKeyResolver({
        trustedOrigins: [origin],
        source: createKeyPageFetcher({ policy }),
        txt: async () => [],
      });
      const zone = dnsZone(s, b);
      const ports = new Map<string, number>();
      const route = (domain: string) => ports.get(domain) ?? 0;
      const sellerAgent = await startAgent({
        party: s,
        policy: sellerLimits,
        respond: quoteAnswer("45000"),
        resolveKey: overHttp,
        clock: Date.now,
        zone,
        route,
      });
      const buyerAgent = await startAgent({
        party: b,
        policy: buyerLimits,
        respond: acceptQuotes,
        resolveKey: overHttp,
        clock: Date.now,
        zone,
        route,
      });
      running.push(sellerAgent, buyerAgent);
      ports.set(s.domain, sellerAgent.smtp.port);
      ports.set(b.domain, buyerAgent.smtp.port);
      const sent = await buyerAgent.inbox.start(ASK, s.address);
      const thread = sent !== undefined && "message" in sent ? sent.message.thread : "";
      for (const [agent, address] of [
        [sellerAgent, s.address],
        [buyerAgent, b.address],
      ] as const) {
        const record = await agent.store.record(address, thread);
        // A checker with no cache of its own reads both pages over HTTP again.
        const checked = await checkRecord(record, {
          trustedOrigins: [origin],
          source: createKeyPageFetcher({ policy }),
          txt: async () => [],
        });
        expect(checked).toMatchObject({ ok: true, result: "two_signatures" });
      }
      expect(new Set(requests)).toEqual(
        new Set([
          `GET /.well-known/agent-agreements/${s.party}.json`,
          `GET /.well-known/agent-agreements/${b.party}.json`,
        ]),
      );
      // Without the development policy the same pages are refused before any request is made.
      const before = requests.length;
      const record = await sellerAgent.store.record(s.address, thread);
      const refused = await checkRecord(record, { trustedOrigins: [origin], txt: async () => [] });
      expect(refused).toMatchObject({ ok: false, result: "does_not_check_out" });
      expect(refused.ok ? "" : refused.reason).toMatch(/could not be fetched/);
      expect(requests.length).toBe(before);
    } finally {
      await closeEgress(policy);
      keyServer.closeAllConnections();
      await new Promise<void>((resolve) => keyServer.close(() => resolve()));
    }
  });
});
