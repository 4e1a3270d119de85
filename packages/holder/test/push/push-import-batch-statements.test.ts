/**
 * The doorbells of one import batch are written together: one `enqueueMany` for every subscribed
 * intent the batch matched and one upsert of their places, so the import does not pay five
 * statements per subscription while it holds the arrivals lock (the soak's importer waited on
 * exactly that). On PostgreSQL the statements are counted on the real `pg` client; on both engines
 * every subscription hears of the batch once, with the right count.
 */
import { forEachEngine, pgStatementsDuring } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAgentEndpoint } from "../support/push-endpoint.js";
import { activeIntent, type CatalogueOfferInput, startServices } from "../support/services-harness.js";

const SUBSCRIBED = 12;

const octavia = (ref: string): CatalogueOfferInput => ({
  source: { kind: "catalogue", ref, seller: "Auto Bratislava" },
  title: `Škoda Octavia Combi ${ref}`,
  category: "vehicles",
  price: { amount: 12_000, currency: "EUR" },
  location: { country: "SK", region: "SK-BL" },
  attributes: { make: "Škoda", model: "Octavia" },
});

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  it(`one batch matching ${SUBSCRIBED} subscribed intents: one doorbell each, written with a few statements`, async () => {
    const h = await startServices(engine, { push: true });
    const endpoint = await startAgentEndpoint(h.clock.now);
    try {
      const push = h.services.push as NonNullable<typeof h.services.push>;
      const subscriptions: string[] = [];
      for (let i = 0; i < SUBSCRIBED; i++) {
        const buyer = await activeIntent(h, `batch${i}@example.sk`);
        const { subscriptionId } = await push.subscribe(
          { kind: "intent-code", intentId: buyer.intentId },
          { delivery: { url: `${endpoint.url}/b${i}`, secret: endpoint.secret } },
        );
        await h.runDue();
        await push.approve(buyer.intentId, subscriptionId);
        subscriptions.push(subscriptionId);
      }
      await h.runDue();

      const { result, texts } = await pgStatementsDuring(() =>
        h.services.offers.importCatalogue([octavia("B-1"), octavia("B-2")]),
      );
      expect(result).toEqual({ inserted: 2, updated: 0, matched: 2 * SUBSCRIBED });
      await h.runDue();
      const rung = endpoint.of("intent.matches.delivered");
      expect(rung.map((d) => d.data.subscriptionId).sort()).toEqual([...subscriptions].sort());
      expect(rung.every((d) => d.data.newMatches === 2)).toBe(true);

      if (engine.dialect === "postgres") {
        const count = (pattern: RegExp) => texts.filter((text) => pattern.test(text)).length;
        expect(count(/insert into "holder_push_announced"/i)).toBe(1);
        expect(count(/insert into "?delivery_outbox"?/i)).toBeLessThanOrEqual(2);
      }
    } finally {
      await endpoint.close();
    }
  });
});
