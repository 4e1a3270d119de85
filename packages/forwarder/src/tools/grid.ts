/** The Doorbell holder's demand grid (its cells are the same enums whoever runs the holder). */
import { BUDGET_BANDS, COUNTRIES, type DemandGrid, regionsOf } from "@doorbell/intents";

export const FORWARDED_GRID: DemandGrid = {
  threshold: 5,
  categories: ["vehicles", "property"],
  countries: [...COUNTRIES],
  regions: Object.fromEntries(COUNTRIES.map((country) => [country, regionsOf(country).map((r) => r.code)])),
  budgetBands: BUDGET_BANDS.map((band) => ({ ...band, currency: band.currency ?? "none" })),
};
