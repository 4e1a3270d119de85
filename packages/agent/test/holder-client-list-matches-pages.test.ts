// The holder client follows the holder's extensions.more (binding: "anything the holder adds goes
// under extensions", issue 16 item 14): one read returns every match, across full pages, from a
// real holder over MCP on loopback.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MINUTE, type RunningHolder, startHolder } from "./holder-fixture.js";

// A Doorbell holder answers at most this many matches at once (holder LIST_MATCHES_MAX).
const PAGE = 1_000;

let h: RunningHolder;
beforeAll(async () => {
  h = await startHolder();
});
afterAll(async () => {
  await h?.close();
});

describe("holder client: pages of intent_list_matches", () => {
  it("reads past a full page in one listMatches", async () => {
    const { intentCode } = await h.activeIntent();
    h.clock.advance(MINUTE);
    await h.addOffers(PAGE); // every match at one instant: one full page
    h.clock.advance(MINUTE);
    await h.addOffers(3);
    const client = await h.client();
    const { matches } = await client.listMatches(intentCode);
    expect(matches).toHaveLength(PAGE + 3);
    expect(new Set(matches.map((m) => m.offer.id)).size).toBe(PAGE + 3);
    const times = matches.map((m) => Date.parse(m.deliveredAt));
    expect(times).toEqual([...times].sort((a, b) => a - b));
  }, 120_000);
});
