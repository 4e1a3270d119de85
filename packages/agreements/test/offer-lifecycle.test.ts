// The offer lifecycle: open → agreed / declined / cancelled / expired / replaced; counters as
// `replaces`; a late or superseded accept is refused and changes nothing.
import { describe, expect, it } from "vitest";
import { AgreementThread, type Message, parseMessageValue } from "../src/index.js";
import { accept, askQuote, BUYER, IDS, quote, SELLER, T0 } from "./support.js";

// JSON round trip: the fixtures blank members with undefined, which JSON drops.
const p = (m: Message | Record<string, unknown>) => parseMessageValue(JSON.parse(JSON.stringify(m)));
const ask = p(askQuote());
const offer = p(quote({ in_reply_to: IDS.ask, prev: ask.hash }));
const COUNTER = "4a5b6c7d-8e9f-4a0b-9c1d-2e3f4a5b6c7d";

const started = () => {
  const thread = new AgreementThread(IDS.thread);
  thread.apply(ask, T0);
  thread.apply(offer, T0 + 3600);
  return thread;
};
const acceptOf = (hash: string, extra: Record<string, unknown> = {}) => p(accept(hash, extra));
const fromBuyer = (type: string, extra: Record<string, unknown>) =>
  p({ ...(accept(offer.hash) as unknown as Record<string, unknown>), type, authority: undefined, ...extra });

describe("offer lifecycle", () => {
  it("an offer is open until accepted, then agreed", () => {
    const thread = started();
    expect(thread.stateOf(IDS.quote, T0 + 3600)).toBe("open");
    const event = thread.apply(acceptOf(offer.hash), T0 + 7200);
    expect(event.kind).toBe("agreed");
    expect(thread.stateOf(IDS.quote, T0 + 7200)).toBe("agreed");
    expect(thread.chain()).toEqual([ask.hash, offer.hash, acceptOf(offer.hash).hash]);
  });

  it("an offer is expired after its exp, and an accept arriving then is refused", () => {
    const thread = started();
    const exp = offer.message.exp;
    expect(thread.stateOf(IDS.quote, exp)).toBe("open");
    expect(thread.stateOf(IDS.quote, exp + 1)).toBe("expired");
    expect(() => thread.apply(acceptOf(offer.hash), exp + 1)).toThrow(
      expect.objectContaining({ code: "ERR_OFFER_EXPIRED" }),
    );
    expect(thread.chain()).toHaveLength(2);
  });

  it("an accept issued after the offer expired is refused even if it arrives in time by the receiver's clock", () => {
    const thread = started();
    const late = acceptOf(offer.hash, { iat: offer.message.exp + 5, exp: offer.message.exp + 500 });
    expect(() => thread.apply(late, T0 + 7200)).toThrow(
      expect.objectContaining({ code: "ERR_OFFER_EXPIRED" }),
    );
  });

  it("a counter-offer with replaces makes the old offer replaced, and an accept of it is refused", () => {
    const thread = started();
    const counter = p(
      quote({
        id: COUNTER,
        in_reply_to: IDS.quote,
        prev: offer.hash,
        replaces: IDS.quote,
        from: { party: BUYER.party, address: BUYER.address },
        to: { address: SELLER.address },
        total: { amount: "80000", currency: "EUR" },
        items: [{ description: "Oak desk", quantity: 2 }],
        iat: T0 + 5000,
      }),
    );
    expect(thread.apply(counter, T0 + 5000)).toMatchObject({ kind: "offered", replaced: IDS.quote });
    expect(thread.stateOf(IDS.quote, T0 + 5000)).toBe("replaced");
    expect(thread.isCurrent(IDS.quote)).toBe(false);
    expect(() => thread.apply(acceptOf(offer.hash), T0 + 7200)).toThrow(/was replaced by 4a5b6c7d/);
    // The seller accepts the counter instead.
    const acceptCounter = p(
      accept(counter.hash, {
        ref: COUNTER,
        in_reply_to: COUNTER,
        from: { party: SELLER.party, address: SELLER.address },
        to: { address: BUYER.address },
        iat: T0 + 6000,
      }),
    );
    expect(thread.apply(acceptCounter, T0 + 6000).kind).toBe("agreed");
  });

  it("only the receiver of an offer accepts it, addressed to the offer's sender", () => {
    const thread = started();
    const bySeller = acceptOf(offer.hash, {
      from: { address: SELLER.address },
      to: { address: BUYER.address },
    });
    expect(() => thread.apply(bySeller, T0 + 7200)).toThrow(
      expect.objectContaining({ code: "ERR_WRONG_SENDER" }),
    );
    const third = acceptOf(offer.hash, { to: { address: "third@party.example" } });
    expect(() => thread.apply(third, T0 + 7200)).toThrow(
      expect.objectContaining({ code: "ERR_WRONG_RECIPIENT" }),
    );
  });

  it("an accept whose prev is not the offer's hash is refused", () => {
    const thread = started();
    expect(() => thread.apply(acceptOf(ask.hash), T0 + 7200)).toThrow(
      expect.objectContaining({ code: "ERR_PREV_MISMATCH" }),
    );
  });

  it("an ask_quote cannot be accepted", () => {
    const thread = new AgreementThread(IDS.thread);
    thread.apply(ask, T0);
    const acceptAsk = acceptOf(ask.hash, {
      ref: IDS.ask,
      in_reply_to: IDS.ask,
      from: { address: SELLER.address },
      to: { address: BUYER.address },
    });
    expect(() => thread.apply(acceptAsk, T0 + 60)).toThrow(/an ask_quote cannot be accepted/);
  });

  it("times are accepted by picking one offered slot; a quote by none", () => {
    const times = p({
      ...(quote({ in_reply_to: IDS.ask, prev: ask.hash }) as unknown as Record<string, unknown>),
      type: "propose_times",
      items: undefined,
      total: undefined,
      delivery_by: undefined,
      slots: [{ start: "2026-01-12T09:00:00Z", end: "2026-01-12T10:00:00Z", time_zone: "UTC" }],
    });
    const thread = new AgreementThread(IDS.thread);
    thread.apply(ask, T0);
    thread.apply(times, T0 + 3600);
    expect(() => thread.apply(acceptOf(times.hash), T0 + 7200)).toThrow(
      expect.objectContaining({ code: "ERR_SLOT_INVALID" }),
    );
    expect(() => thread.apply(acceptOf(times.hash, { slot: 1 }), T0 + 7200)).toThrow(
      /one of the 1 offered slots/,
    );
    expect(thread.apply(acceptOf(times.hash, { slot: 0 }), T0 + 7200).kind).toBe("agreed");
    const withSlot = started();
    expect(() => withSlot.apply(acceptOf(offer.hash, { slot: 0 }), T0 + 7200)).toThrow(/without a slot/);
  });

  it("a decline ends an open offer; a later accept is refused as not open", () => {
    const thread = started();
    thread.apply(
      fromBuyer("decline", { id: "7c6b5a49-3827-4165-8f4e-3d2c1b0a9f8e", reason: "price" }),
      T0 + 7000,
    );
    expect(thread.stateOf(IDS.quote, T0 + 7000)).toBe("declined");
    expect(() => thread.apply(acceptOf(offer.hash), T0 + 7200)).toThrow(
      expect.objectContaining({ code: "ERR_OFFER_NOT_OPEN" }),
    );
  });

  it("the sender cancels an open offer; the receiver cannot", () => {
    const cancel = (from: typeof SELLER, to: typeof BUYER) =>
      fromBuyer("cancel", {
        id: "8d7c6b5a-4938-4276-a05f-4e3d2c1b0a9f",
        from: { address: from.address },
        to: { address: to.address },
      });
    const byReceiver = started();
    expect(() => byReceiver.apply(cancel(BUYER, SELLER), T0 + 7000)).toThrow(
      /only the sender of an open offer/,
    );
    const bySender = started();
    expect(bySender.apply(cancel(SELLER, BUYER), T0 + 7000)).toMatchObject({
      kind: "cancelled",
      agreement: false,
    });
    expect(bySender.stateOf(IDS.quote, T0 + 7000)).toBe("cancelled");
  });

  it("a cancel that answers no message (in_reply_to is optional) ends the offer; prev alone does not parse", () => {
    const thread = started();
    const cancel = (extra: Record<string, unknown>) =>
      fromBuyer("cancel", {
        id: "8d7c6b5a-4938-4276-a05f-4e3d2c1b0a9f",
        in_reply_to: undefined,
        prev: undefined,
        from: { address: SELLER.address },
        to: { address: BUYER.address },
        ...extra,
      });
    expect(() => cancel({ prev: offer.hash })).toThrow(
      expect.objectContaining({ code: "ERR_MESSAGE_INVALID" }),
    );
    expect(thread.apply(cancel({}), T0 + 7000)).toMatchObject({ kind: "cancelled", agreement: false });
    expect(thread.stateOf(IDS.quote, T0 + 7000)).toBe("cancelled");
  });

  it("either side cancels an agreement", () => {
    const thread = started();
    const agreed = acceptOf(offer.hash);
    thread.apply(agreed, T0 + 7200);
    const cancel = fromBuyer("cancel", {
      id: "8d7c6b5a-4938-4276-a05f-4e3d2c1b0a9f",
      ref: IDS.accept,
      in_reply_to: IDS.accept,
      prev: agreed.hash,
      from: { address: SELLER.address },
      to: { address: BUYER.address },
    });
    expect(thread.apply(cancel, T0 + 8000)).toMatchObject({ kind: "cancelled", agreement: true });
  });

  it("a message seen twice, from another thread, or from a third address is refused and changes nothing", () => {
    const thread = started();
    expect(() => thread.apply(offer, T0 + 3700)).toThrow(
      expect.objectContaining({ code: "ERR_DUPLICATE_MESSAGE" }),
    );
    expect(() => thread.apply(p(quote({ thread: "11111111-2222-4333-8444-555555555555" })), T0)).toThrow(
      expect.objectContaining({ code: "ERR_THREAD_MISMATCH" }),
    );
    const intruder = acceptOf(offer.hash, { from: { address: "intruder@else.example" } });
    expect(() => thread.apply(intruder, T0 + 7200)).toThrow(
      expect.objectContaining({ code: "ERR_WRONG_SENDER" }),
    );
    expect(thread.chain()).toEqual([ask.hash, offer.hash]);
    expect(thread.stateOf(IDS.quote, T0 + 7200)).toBe("open");
  });
});
