import { BUDGET_BANDS } from "@doorbell/intents";
import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDemandService } from "../../src/demand.js";
import type { DemandCell } from "../../src/model/types.js";
import { createTestHolderContext, fakeClock } from "../../src/testing.js";
import { DAY_MS, insertIntent } from "../support/offer-helpers.js";

// intent_demand_summary: counts only active intents (never drafts: consent-link rule 1), withholds
// any cell below the k-anonymity threshold, and says nothing about any one intent.

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  async function setup(threshold = 3) {
    const clock = fakeClock();
    const ctx = await createTestHolderContext(engine.db, clock.now, {
      reset: true,
      config: { demandThreshold: threshold },
    });
    return { clock, ctx, demand: createDemandService(ctx) };
  }
  const vehicles = (budget: number | null, region: string | null = "SK-BL") => ({
    criteria: { category: "vehicles" as const },
    country: "SK" as const,
    region,
    budget_amount: budget,
    budget_currency: budget === null ? null : ("EUR" as const),
  });
  const cell = (over: Partial<DemandCell> = {}): DemandCell => ({
    category: "vehicles",
    country: "SK",
    budgetBand: "EUR-10000-20000",
    ...over,
  });

  it("publishes a grid of categories, countries, regions and bands per currency", async () => {
    const { demand } = await setup(3);
    const grid = demand.grid();
    expect(grid.threshold).toBe(3);
    expect(grid.categories).toEqual(["vehicles", "property"]);
    expect(grid.regions.SK).toContain("SK-BL");
    expect(grid.regions.CZ).toContain("CZ-10");
    expect(grid.budgetBands.map((b) => b.id)).toContain("EUR-10000-20000");
    expect(grid.budgetBands.map((b) => b.id)).toContain("CZK-250000-500000");
    expect(grid.budgetBands.at(-1)?.id).toBe("none");
    // Bands of one currency tile the line: each starts where the previous ends.
    for (const currency of ["EUR", "CZK"]) {
      const bands = BUDGET_BANDS.filter((b) => b.currency === currency);
      expect(bands[0]?.min).toBe(0);
      for (let i = 1; i < bands.length; i++) expect(bands[i]?.min).toBe(bands[i - 1]?.max);
      expect(bands.at(-1)?.max).toBeNull();
    }
  });

  it("withholds a cell below the threshold and publishes it at the threshold", async () => {
    const { demand, ctx } = await setup(3);
    await insertIntent(ctx, vehicles(15_000));
    await insertIntent(ctx, vehicles(19_999));
    const below = await demand.summary(cell());
    expect(below).toEqual({
      withheld: true,
      cell: cell(),
      reason: "below-threshold",
      asOf: new Date(ctx.clock()).toISOString(),
    });
    await insertIntent(ctx, vehicles(10_000)); // lower bound included
    await insertIntent(ctx, vehicles(20_000)); // upper bound excluded: the next band
    expect(await demand.summary(cell())).toMatchObject({ withheld: false, activeIntents: 3 });
    expect(await demand.summary(cell({ region: "SK-BL" }))).toMatchObject({
      withheld: false,
      activeIntents: 3,
    });
    expect(await demand.summary(cell({ budgetBand: "EUR-20000-50000" }))).toMatchObject({ withheld: true });
  });

  it("never counts drafts, unconfirmed, withdrawn, expired or lapsed intents", async () => {
    const { demand, ctx, clock } = await setup(2);
    for (const status of [
      "awaiting_consent",
      "awaiting_email_confirmation",
      "withdrawn",
      "expired",
    ] as const) {
      for (let i = 0; i < 5; i++) await insertIntent(ctx, { ...vehicles(15_000), status });
    }
    expect(await demand.summary(cell())).toMatchObject({ withheld: true });
    await insertIntent(ctx, vehicles(15_000));
    await insertIntent(ctx, { ...vehicles(15_000), valid_until: clock.now() + DAY_MS });
    expect(await demand.summary(cell())).toMatchObject({ withheld: false, activeIntents: 2 });
    clock.advance(DAY_MS);
    expect(await demand.summary(cell())).toMatchObject({ withheld: true });
  });

  it("a country cell adds up only the parts publishable alone, so subtraction reveals no withheld group", async () => {
    const { demand, ctx } = await setup(3);
    for (let i = 0; i < 4; i++) await insertIntent(ctx, vehicles(15_000, "SK-BL"));
    for (let i = 0; i < 2; i++) await insertIntent(ctx, vehicles(15_000, "SK-KI")); // withheld
    for (let i = 0; i < 1; i++) await insertIntent(ctx, vehicles(15_000, null)); // whole country, withheld
    expect(await demand.summary(cell({ region: "SK-BL" }))).toMatchObject({
      withheld: false,
      activeIntents: 4,
    });
    expect(await demand.summary(cell({ region: "SK-KI" }))).toMatchObject({ withheld: true });
    // 4, not 7: country − published regions = 0, never the withheld 2 + 1.
    expect(await demand.summary(cell())).toMatchObject({ withheld: false, activeIntents: 4 });
    for (let i = 0; i < 2; i++) await insertIntent(ctx, vehicles(15_000, null));
    expect(await demand.summary(cell())).toMatchObject({ withheld: false, activeIntents: 7 });
  });

  it("the band 'none' counts intents without a budget; other currencies and categories stay apart", async () => {
    const { demand, ctx } = await setup(1);
    await insertIntent(ctx, vehicles(null));
    await insertIntent(ctx, { ...vehicles(null), criteria: { category: "property" } });
    await insertIntent(ctx, { ...vehicles(400_000), budget_currency: "CZK" });
    expect(await demand.summary(cell({ budgetBand: "none" }))).toMatchObject({
      withheld: false,
      activeIntents: 1,
    });
    expect(await demand.summary(cell({ budgetBand: "CZK-250000-500000" }))).toMatchObject({
      activeIntents: 1,
    });
    expect(await demand.summary(cell({ budgetBand: "EUR-200000-500000" }))).toMatchObject({ withheld: true });
    expect(await demand.summary(cell({ category: "property", budgetBand: "none" }))).toMatchObject({
      activeIntents: 1,
    });
  });

  it("an answer carries only the cell, a count or 'withheld', and the time: nothing about an intent", async () => {
    const { demand, ctx } = await setup(1);
    const id = await insertIntent(ctx, {
      ...vehicles(15_000),
      statement: "CANARY-statement",
      pseudonym: "CANARY-pseudo",
    });
    const answer = await demand.summary(cell());
    expect(Object.keys(answer).sort()).toEqual(["activeIntents", "asOf", "cell", "withheld"]);
    const text = JSON.stringify(answer);
    for (const secret of [id, "CANARY"]) expect(text).not.toContain(secret);
  });

  it("refuses cells that are not in the grid with precise messages", async () => {
    const { demand } = await setup();
    await expect(demand.summary(cell({ budgetBand: "EUR-1-2" }))).rejects.toMatchObject({
      code: "ERR_HOLDER_INVALID",
      message: expect.stringContaining("budgetBand must be a band id from the grid"),
    });
    await expect(demand.summary(cell({ region: "CZ-10" }))).rejects.toMatchObject({
      message: expect.stringContaining("region must be an ISO 3166-2 region of SK"),
    });
    await expect(demand.summary({ ...cell(), intentId: "x" } as unknown as DemandCell)).rejects.toMatchObject(
      {
        message: expect.stringContaining("intentId is not a field of a demand cell"),
      },
    );
    await expect(demand.summary(cell({ country: "AT" as "SK" }))).rejects.toMatchObject({
      message: 'country must be one of "SK", "CZ" (got "AT")',
    });
  });
});
