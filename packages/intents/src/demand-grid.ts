// The published grid of intent_demand_summary: which cells exist and the budget bands they count in.

/** The grid a holder publishes (so sellers know which cells exist). */
export interface DemandGrid {
  threshold: number;
  categories: readonly string[];
  countries: readonly string[];
  /** The regions (ISO 3166-2) a cell may name, per country. */
  regions: Readonly<Record<string, readonly string[]>>;
  budgetBands: readonly { id: string; currency: string; min: number; max: number | null }[];
}

export interface BudgetBand {
  id: string;
  currency: "EUR" | "CZK" | null;
  min: number;
  max: number | null;
}

const EUR_EDGES = [0, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000, 500_000];
const CZK_EDGES = [0, 50_000, 125_000, 250_000, 500_000, 1_250_000, 2_500_000, 5_000_000, 12_500_000];

function bands(currency: "EUR" | "CZK", edges: readonly number[]): BudgetBand[] {
  return edges.map((min, i) => {
    const max = edges[i + 1] ?? null;
    return { id: `${currency}-${min}-${max ?? ""}`, currency, min, max };
  });
}

/** The published bands: "EUR-10000-20000" is 10,000 ≤ budget < 20,000 EUR; "EUR-500000-" is open above. */
export const BUDGET_BANDS: readonly BudgetBand[] = [
  ...bands("EUR", EUR_EDGES),
  ...bands("CZK", CZK_EDGES),
  { id: "none", currency: null, min: 0, max: null },
];
