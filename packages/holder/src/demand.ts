import {
  BUDGET_BANDS,
  type BudgetBand,
  COUNTRIES,
  type DemandGrid,
  isRegionOf,
  regionsOf,
} from "@doorbell/intents";
import { sql } from "@doorbell/store";
import type { HolderContext } from "./context.js";
import type { DemandService } from "./model/services.js";
import { type DemandCell, type DemandSummary, HolderError } from "./model/types.js";

/**
 * Demand summaries (intent_demand_summary) over a published band grid: category × country (or one
 * of its regions) × budget band. Bands are per currency, in whole units, lower bound included and
 * upper bound excluded; the band "none" holds the intents without a budget. Bands partition the
 * intents, so no two cells overlap except a country and its regions (below).
 *
 * Only active, still valid intents count: drafts and intents awaiting e-mail confirmation never
 * (consent-link rule 1), nor withdrawn or expired ones. A cell with fewer than
 * `config.demandThreshold` intents is withheld, and "fewer" includes none, so a withheld cell never
 * tells 0 from 1.
 *
 * A country cell is the sum of its parts that could be published on their own: each region's
 * count if that region's cell is published, plus the count of intents that name no region if that
 * count reaches the threshold. So a country figure minus the published region figures never
 * reveals a withheld group: subtraction gives 0 or a group of at least the threshold.
 */

const CATEGORIES = ["vehicles", "property"] as const;

function refuse(message: string): never {
  throw new HolderError("ERR_HOLDER_INVALID", message);
}

function checkCell(cell: unknown): { cell: DemandCell; band: BudgetBand } {
  if (typeof cell !== "object" || cell === null || Array.isArray(cell)) {
    refuse("the cell must be an object { category, country, region?, budgetBand }");
  }
  const c = cell as Record<string, unknown>;
  for (const key of Object.keys(c)) {
    if (!["category", "country", "region", "budgetBand"].includes(key)) {
      refuse(`${key} is not a field of a demand cell (allowed: category, country, region, budgetBand)`);
    }
  }
  if (typeof c.category !== "string" || !(CATEGORIES as readonly string[]).includes(c.category)) {
    refuse(`category must be one of "vehicles", "property" (got ${JSON.stringify(c.category) ?? "nothing"})`);
  }
  if (typeof c.country !== "string" || !(COUNTRIES as readonly string[]).includes(c.country)) {
    refuse(`country must be one of "SK", "CZ" (got ${JSON.stringify(c.country) ?? "nothing"})`);
  }
  const country = c.country as DemandCell["country"];
  if (c.region !== undefined && (typeof c.region !== "string" || !isRegionOf(c.region, country))) {
    refuse(
      `region must be an ISO 3166-2 region of ${country} from the grid, e.g. "${regionsOf(country)[0]?.code}"`,
    );
  }
  const band = BUDGET_BANDS.find((b) => b.id === c.budgetBand);
  if (band === undefined) {
    refuse(
      `budgetBand must be a band id from the grid, e.g. "EUR-10000-20000" or "none" (got ${JSON.stringify(c.budgetBand) ?? "nothing"})`,
    );
  }
  return {
    cell: {
      category: c.category as DemandCell["category"],
      country,
      ...(typeof c.region === "string" ? { region: c.region } : {}),
      budgetBand: band.id,
    },
    band,
  };
}

export function createDemandService(ctx: HolderContext): DemandService {
  const { store, clock } = ctx;
  const threshold = () => Math.max(1, ctx.config.demandThreshold);

  const grid: DemandGrid = {
    threshold: threshold(),
    categories: CATEGORIES,
    countries: COUNTRIES,
    regions: Object.fromEntries(COUNTRIES.map((country) => [country, regionsOf(country).map((r) => r.code)])),
    budgetBands: BUDGET_BANDS.map(({ id, currency, min, max }) => ({
      id,
      currency: currency ?? "none",
      min,
      max,
    })),
  };

  return {
    grid() {
      return grid;
    },

    async summary(input) {
      const { cell, band } = checkCell(input);
      const now = clock();
      const asOf = new Date(now).toISOString();
      let query = store.db
        .selectFrom("holder_intents")
        .select(["region", sql<number>`count(*)`.as("n")])
        .where("status", "=", "active")
        .where("valid_until", ">", now)
        .where("category", "=", cell.category)
        .where("country", "=", cell.country);
      if (cell.region !== undefined) query = query.where("region", "=", cell.region);
      if (band.currency === null) {
        query = query.where("budget_amount", "is", null);
      } else {
        query = query.where("budget_currency", "=", band.currency).where("budget_amount", ">=", band.min);
        if (band.max !== null) query = query.where("budget_amount", "<", band.max);
      }
      const groups = await query.groupBy("region").execute();
      const k = threshold();
      // A region cell is its own count; a country cell adds up only the parts publishable alone.
      const count = groups.reduce((sum, group) => {
        const n = Number(group.n);
        return cell.region !== undefined || n >= k ? sum + n : sum;
      }, 0);
      if (count < k) return { withheld: true, cell, reason: "below-threshold", asOf } satisfies DemandSummary;
      return { withheld: false, cell, activeIntents: count, asOf } satisfies DemandSummary;
    },
  };
}
