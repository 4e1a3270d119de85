// Binding, intent_search_offers (anyone, read-only): the holder's ordinary catalogue search by
// words, answered as { offers: Offer[] } with catalogue offers only.
import { forEachEngine } from "@doorbell/store/testing";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MINUTE, octavia, ok, refused, startHolder, type TestHolder } from "../support/mcp-harness.js";

interface Found {
  offers: { title: string; publishedAt: string; source: { kind: string } }[];
}

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let h: TestHolder;
  let client: Client;

  beforeAll(async () => {
    h = await startHolder(engine);
    client = await h.connect();
    await h.services.offers.importCatalogue([
      octavia({ title: "Škoda Octavia Combi", publishedAt: "2026-11-20T08:00:00Z" }),
      octavia({ title: "Škoda Octavia RS", publishedAt: "2026-11-25T08:00:00Z" }),
      octavia({
        title: "Byt 3+1 Praha Vinohrady",
        category: "property",
        price: { amount: 9_500_000, currency: "CZK" },
        location: { country: "CZ", region: "CZ-10" },
        attributes: { kind: "flat", rooms: 3, areaM2: 78 },
        publishedAt: "2026-11-22T08:00:00Z",
      }),
    ]);
    h.clock.advance(MINUTE);
  });
  afterAll(async () => {
    await h?.close();
  });

  it("finds offers by words, newest first", async () => {
    const { offers } = await ok<Found>(client, "intent_search_offers", { statement: "octavia" });
    expect(offers.map((o) => o.title)).toEqual(["Škoda Octavia RS", "Škoda Octavia Combi"]);
    for (const offer of offers) expect(offer.source.kind).toBe("catalogue");
  });

  it("finds without diacritics and across categories", async () => {
    const { offers } = await ok<Found>(client, "intent_search_offers", { statement: "byt praha" });
    expect(offers.map((o) => o.title)).toEqual(["Byt 3+1 Praha Vinohrady"]);
    const skoda = await ok<Found>(client, "intent_search_offers", { statement: "skoda" });
    expect(skoda.offers).toHaveLength(2);
  });

  it("respects limit", async () => {
    const { offers } = await ok<Found>(client, "intent_search_offers", { statement: "octavia", limit: 1 });
    expect(offers).toHaveLength(1);
  });

  it("answers { offers: [] } when nothing fits", async () => {
    expect(await ok(client, "intent_search_offers", { statement: "tractor" })).toEqual({ offers: [] });
  });

  it.each([
    ["an empty statement", { statement: "" }],
    ["a limit of 0", { statement: "octavia", limit: 0 }],
    ["a limit of 1000", { statement: "octavia", limit: 1000 }],
    ["an undeclared field", { statement: "octavia", sort: "price" }],
  ])("refuses %s plainly", async (_what, args) => {
    const refusal = await refused(client, "intent_search_offers", args);
    expect(refusal.text.length).toBeGreaterThan(10);
  });
});
