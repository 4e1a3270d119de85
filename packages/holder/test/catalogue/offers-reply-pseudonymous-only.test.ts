import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOfferService } from "../../src/catalogue/service.js";
import { createMatchingService } from "../../src/matching/service.js";
import type { ReplyOfferInput } from "../../src/model/services.js";
import { createTestHolderContext, fakeClock } from "../../src/testing.js";
import { DAY_MS, insertIntent, matchesOf } from "../support/offer-helpers.js";

// Binding: intent_submit_offer takes a reply only for intents with visibility pseudonymous (and,
// here, only while the intent is active); every refusal looks the same; an accepted reply is
// delivered to the intent it answers and to no other.

function reply(inReplyTo: string, over: Partial<ReplyOfferInput> = {}): ReplyOfferInput {
  return {
    source: { kind: "reply", ref: "quote-7", seller: "Autobazár Zvolen" },
    inReplyTo,
    title: "Škoda Octavia Combi 2.0 TDI, 2019",
    category: "vehicles",
    price: { amount: 13_500, currency: "EUR" },
    location: { country: "SK", region: "SK-BC" },
    attributes: { make: "Škoda", model: "Octavia", year: 2019, mileageKm: 98_000, fuel: "diesel" },
    ...over,
  };
}

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  async function setup() {
    const clock = fakeClock();
    const ctx = await createTestHolderContext(engine.db, clock.now, { reset: true });
    const notified: string[][] = [];
    const matching = createMatchingService(ctx, { onMatched: (ids) => void notified.push(ids) });
    const offers = createOfferService(ctx, matching);
    await matching.start();
    const criteria = { category: "vehicles" as const, make: "Škoda" };
    const budget = { budget_amount: 15_000, budget_currency: "EUR" as const };
    return { clock, ctx, matching, offers, notified, criteria, budget };
  }

  it("a reply to an active pseudonymous intent is accepted and matched to that intent only", async () => {
    const { ctx, offers, notified, criteria, budget } = await setup();
    const target = await insertIntent(ctx, { visibility: "pseudonymous", criteria, ...budget });
    // Another intent the reply would fit just as well: it must not receive it.
    const bystander = await insertIntent(ctx, { visibility: "pseudonymous", criteria, ...budget });
    expect(await offers.submitReply(reply(target))).toEqual({ accepted: true });
    expect(await matchesOf(ctx, target)).toHaveLength(1);
    expect(await matchesOf(ctx, bystander)).toHaveLength(0);
    expect(notified).toEqual([[target]]);
    const stored = await ctx.store.db
      .selectFrom("holder_offers")
      .selectAll()
      .where("in_reply_to", "=", target)
      .execute();
    expect(stored).toHaveLength(1);
    expect(stored[0]?.source_kind).toBe("reply");
  });

  it("the same reply sent twice is accepted once", async () => {
    const { ctx, offers, criteria } = await setup();
    const target = await insertIntent(ctx, { visibility: "pseudonymous", criteria });
    expect(await offers.submitReply(reply(target))).toEqual({ accepted: true });
    expect(await offers.submitReply(reply(target))).toEqual({ accepted: true });
    expect(await matchesOf(ctx, target)).toHaveLength(1);
    // The same seller reference answering another intent is a different reply.
    const second = await insertIntent(ctx, { visibility: "pseudonymous", criteria });
    expect(await offers.submitReply(reply(second))).toEqual({ accepted: true });
    expect(await matchesOf(ctx, second)).toHaveLength(1);
  });

  it("private, draft, unconfirmed, withdrawn, expired, lapsed and unknown intents all refuse with the same answer", async () => {
    const { clock, ctx, offers, criteria } = await setup();
    const refusing = [
      await insertIntent(ctx, { visibility: "private", criteria }),
      await insertIntent(ctx, { visibility: "pseudonymous", status: "awaiting_consent", criteria }),
      await insertIntent(ctx, {
        visibility: "pseudonymous",
        status: "awaiting_email_confirmation",
        criteria,
      }),
      await insertIntent(ctx, { visibility: "pseudonymous", status: "withdrawn", criteria }),
      await insertIntent(ctx, { visibility: "pseudonymous", status: "expired", criteria }),
      await insertIntent(ctx, { visibility: "pseudonymous", criteria, valid_until: clock.now() + DAY_MS }),
      "int_does-not-exist",
    ];
    clock.advance(DAY_MS);
    for (const id of refusing) {
      expect(await offers.submitReply(reply(id))).toStrictEqual({ accepted: false });
    }
    const rows = await ctx.store.db.selectFrom("holder_offers").select("id").execute();
    expect(rows).toHaveLength(0); // nothing stored for a refused reply, so no match to read
  });

  it("a reply that does not fit the intent (category, budget, criteria) is refused the same way", async () => {
    const { ctx, offers, criteria, budget } = await setup();
    const target = await insertIntent(ctx, { visibility: "pseudonymous", criteria, ...budget });
    expect(await offers.submitReply(reply(target, { price: { amount: 15_001, currency: "EUR" } }))).toEqual({
      accepted: false,
    });
    expect(
      await offers.submitReply(reply(target, { attributes: { make: "Kia", model: "Ceed", year: 2019 } })),
    ).toEqual({ accepted: false });
    expect(
      await offers.submitReply(
        reply(target, { category: "property", attributes: { kind: "flat", rooms: 2 }, title: "Byt" }),
      ),
    ).toEqual({ accepted: false });
    expect(await offers.submitReply(reply(target, { price: { amount: 15_000, currency: "EUR" } }))).toEqual({
      accepted: true,
    });
  });

  it("a reply is never matched to other intents when they activate later, and search never shows it", async () => {
    const { ctx, matching, offers, criteria } = await setup();
    const target = await insertIntent(ctx, { visibility: "pseudonymous", criteria });
    expect(await offers.submitReply(reply(target))).toEqual({ accepted: true });
    const later = await insertIntent(ctx, { criteria });
    expect(await matching.onActivated(later)).toEqual({ matched: 0 });
    expect(await offers.search("Octavia", 10)).toEqual([]);
  });

  it("an invalid reply is refused with a precise message (not a silent false)", async () => {
    const { ctx, offers, criteria } = await setup();
    const target = await insertIntent(ctx, { visibility: "pseudonymous", criteria });
    await expect(
      offers.submitReply({ ...reply(target), source: { kind: "catalogue" } } as unknown as ReplyOfferInput),
    ).rejects.toMatchObject({
      code: "ERR_HOLDER_INVALID",
      message: expect.stringContaining('offer.source.kind must be "reply"'),
    });
    await expect(
      offers.submitReply({ ...reply(target), contact: "x@example.com" } as unknown as ReplyOfferInput),
    ).rejects.toMatchObject({
      code: "ERR_HOLDER_INVALID",
      message: expect.stringContaining("offer.contact is not a field"),
    });
  });

  it("the buyer reads the reply with the seller's own reference, not the stored prefix", async () => {
    const { ctx, matching, offers, criteria } = await setup();
    const target = await insertIntent(ctx, { visibility: "pseudonymous", criteria });
    await offers.submitReply(reply(target));
    const { matches } = await matching.listMatches({ kind: "intent-code", intentId: target });
    expect(matches).toHaveLength(1);
    expect(matches[0]?.offer.source).toEqual({ kind: "reply", ref: "quote-7", seller: "Autobazár Zvolen" });
    expect(matches[0]?.offer.inReplyTo).toBe(target);
  });
});
