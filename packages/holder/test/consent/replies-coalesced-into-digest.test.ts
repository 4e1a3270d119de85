/**
 * Issue 16 item 9: seller replies are coalesced into the digest. Ten replies in a few minutes are
 * one mail, sent when the first of them is a quarter of an hour old (the holder's minute timer
 * runs sendDueDigests); a catalogue match in the meantime mails at once and carries the replies.
 */
import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPLY_COALESCE_MS } from "../../src/consent/index.js";
import type { ReplyOfferInput } from "../../src/model/services.js";
import { activeIntent, mailsTo, octaviaWanted, startServices } from "../support/services-harness.js";

const reply = (inReplyTo: string, n: number): ReplyOfferInput => ({
  source: { kind: "reply", ref: `quote-${n}`, seller: `Seller ${n}` },
  inReplyTo,
  title: `Škoda Octavia from seller ${n}`,
  category: "vehicles",
  price: { amount: 13_000 + n, currency: "EUR" },
  location: { country: "SK", region: "SK-BL" },
  attributes: { make: "Škoda", model: "Octavia", year: 2019 },
});

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  it("ten replies are one digest, mailed when the first is a quarter of an hour old", async () => {
    const h = await startServices(engine);
    const email = "replies@example.sk";
    const buyer = await activeIntent(h, email, octaviaWanted({ visibility: "pseudonymous" }));
    const before = (await mailsTo(h, email)).length;
    for (let n = 1; n <= 10; n++) {
      expect(await h.services.offers.submitReply(reply(buyer.intentId, n))).toEqual({ accepted: true });
      h.clock.advance(30_000);
    }
    expect(await h.services.consent.sendDueDigests()).toBe(0);
    expect((await mailsTo(h, email)).length).toBe(before);

    h.clock.advance(REPLY_COALESCE_MS - 5 * 60_000 + 1);
    expect(await h.services.consent.sendDueDigests()).toBe(10);
    const mails = await mailsTo(h, email);
    expect(mails.length).toBe(before + 1);
    expect(mails[0]?.subject).toBe("10 new offers for your intent");
    expect(mails[0]?.text).toContain("Škoda Octavia from seller 10");
    expect(mails[0]?.text).toContain("Škoda Octavia from seller 1\n");
    expect(await h.services.consent.sendDueDigests()).toBe(0);
  });

  it("a catalogue match mails at once and carries the waiting replies", async () => {
    const h = await startServices(engine);
    const email = "carried@example.sk";
    const buyer = await activeIntent(h, email, octaviaWanted({ visibility: "pseudonymous" }));
    const before = (await mailsTo(h, email)).length;
    await h.services.offers.submitReply(reply(buyer.intentId, 1));
    await h.services.offers.submitReply(reply(buyer.intentId, 2));
    expect((await mailsTo(h, email)).length).toBe(before);
    h.clock.advance(60_000);
    await h.services.offers.importCatalogue([
      {
        source: { kind: "catalogue", ref: "C-1" },
        title: "Škoda Octavia Combi",
        category: "vehicles",
        price: { amount: 12_000, currency: "EUR" },
        location: { country: "SK", region: "SK-BL" },
        attributes: { make: "Škoda", model: "Octavia" },
      },
    ]);
    const mails = await mailsTo(h, email);
    expect(mails.length).toBe(before + 1);
    expect(mails[0]?.subject).toBe("3 new offers for your intent");
    h.clock.advance(REPLY_COALESCE_MS);
    expect(await h.services.consent.sendDueDigests()).toBe(0);
  });
});
