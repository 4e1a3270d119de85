/**
 * Issue 16 item 8: re-importing an unchanged catalogue re-delivers nothing. A feed without
 * publishedAt, imported twice (or again after an import that stopped part-way), leaves its
 * unchanged rows alone: no new match, no digest mail, no doorbell. A changed row is still delivered.
 */
import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readCatalogueFile } from "../../src/catalogue/catalogue-file.js";
import { DIGEST_WINDOW_MS } from "../../src/consent/index.js";
import { startAgentEndpoint } from "../support/push-endpoint.js";
import { activeIntent, mailsTo, startServices } from "../support/services-harness.js";

const HEADER = "ref,title,category,price,currency,country,region,make,model\n";
const row = (i: number, price = 12_000) =>
  `R-${i},Škoda Octavia ${i},vehicles,${price},EUR,SK,SK-BL,Škoda,Octavia\n`;
const feed = (from: number, to: number) => {
  let text = HEADER;
  for (let i = from; i <= to; i++) text += row(i);
  return text;
};

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  it("imports a feed without publishedAt twice: the second import changes, mails and rings nothing", async () => {
    const h = await startServices(engine, { push: true });
    const endpoint = await startAgentEndpoint(h.clock.now);
    try {
      const buyer = await activeIntent(h, "reimport@example.sk");
      const push = h.services.push as NonNullable<typeof h.services.push>;
      const { subscriptionId } = await push.subscribe(
        { kind: "intent-code", intentId: buyer.intentId },
        { delivery: { url: `${endpoint.url}/a`, secret: endpoint.secret } },
      );
      await h.runDue();
      await push.approve(buyer.intentId, subscriptionId);
      await h.runDue();
      const matchesRung = () => endpoint.of("intent.matches.delivered").length;

      const offers = await readCatalogueFile(feed(1, 30), { format: "csv" });
      const first = await h.services.offers.importCatalogue(offers);
      expect(first).toEqual({ inserted: 30, updated: 0, matched: 30 });
      await h.runDue();
      expect(matchesRung()).toBe(1);
      const mailsAfterFirst = (await mailsTo(h, "reimport@example.sk")).length;

      h.clock.advance(60 * 60_000); // the next nightly run, an hour later
      const again = await h.services.offers.importCatalogue(
        await readCatalogueFile(feed(1, 30), { format: "csv" }),
      );
      expect(again).toEqual({ inserted: 0, updated: 0, matched: 0 });
      h.clock.advance(60 * 60_000);
      await h.runDue();
      expect(matchesRung()).toBe(1);
      expect((await mailsTo(h, "reimport@example.sk")).length).toBe(mailsAfterFirst);
      const list = await h.services.matching.listMatches({ kind: "intent-code", intentId: buyer.intentId });
      expect(list.matches).toHaveLength(30);
      // The time the holder first saw each offer stays its publishedAt.
      expect(new Set(list.matches.map((match) => match.offer.publishedAt)).size).toBe(1);

      // A changed price is a change: that one offer is delivered again.
      const changed = (await readCatalogueFile(feed(1, 30), { format: "csv" })).map((offer) =>
        offer.source.ref === "R-7"
          ? { ...offer, price: { amount: 11_000, currency: "EUR" as const } }
          : offer,
      );
      expect(await h.services.offers.importCatalogue(changed)).toEqual({
        inserted: 0,
        updated: 1,
        matched: 1,
      });
    } finally {
      await endpoint.close();
    }
  });

  it("re-runs an import that stopped part-way: only the rows not yet imported are new", async () => {
    const h = await startServices(engine);
    await activeIntent(h, "rerun@example.sk");
    // The killed run committed the first 20 rows of 50 before it stopped.
    expect(
      await h.services.offers.importCatalogue(await readCatalogueFile(feed(1, 20), { format: "csv" })),
    ).toEqual({
      inserted: 20,
      updated: 0,
      matched: 20,
    });
    const mailsBefore = await mailsTo(h, "rerun@example.sk");
    h.clock.advance(10 * 60_000);
    expect(
      await h.services.offers.importCatalogue(await readCatalogueFile(feed(1, 50), { format: "csv" })),
    ).toEqual({
      inserted: 30,
      updated: 0,
      matched: 30,
    });
    // Within the digest window of the first run's digest (issue 14): mailed when the window ends.
    expect((await mailsTo(h, "rerun@example.sk")).length).toBe(mailsBefore.length);
    h.clock.advance(DIGEST_WINDOW_MS);
    expect(await h.services.consent.sendDueDigests()).toBe(30);
    const mails = await mailsTo(h, "rerun@example.sk");
    expect(mails.length).toBe(mailsBefore.length + 1);
    expect(mails[0]?.subject).toBe("30 new offers for your intent");
  });
});
