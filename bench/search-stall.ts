/**
 * Issue 16 item 5: one client flooding intent_search_offers must not stall everyone else. At
 * 200,000 offers (SQLite, the holder's default), a cheap call — the demand service's summary, what
 * intent_demand_summary runs — is timed every 10 ms, first alone (the baseline), then while four
 * clients search "1 2 3 4 5 6 7 8" back to back. Goal: the p99 under the flood ≤ 50 ms. The
 * search's own latency is printed too. The database is built once and kept in the temp directory
 * (DOORBELL_BENCH_OFFERS sets the count).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { openDatabase } from "@doorbell/store";
import { createHolderServices } from "../packages/holder/src/app/services.js";
import { demoCatalogue } from "../packages/holder/src/catalogue/demo-catalogue.js";
import { createTestHolderContext } from "../packages/holder/src/testing.js";

const OFFERS = Number(process.env.DOORBELL_BENCH_OFFERS ?? 200_000);
const FLOOD_MS = 6_000;
const PROBE_EVERY_MS = 10;
const FLOODERS = 4;
const STATEMENT = "1 2 3 4 5 6 7 8";

const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
};
const ms = (value: number) => `${value.toFixed(1)} ms`;

export async function benchSearchStall(): Promise<void> {
  const file = path.join(os.tmpdir(), `doorbell-search-stall-${OFFERS}.sqlite`);
  const fresh = !fs.existsSync(file);
  const db = await openDatabase(`sqlite:${file}`);
  const ctx = await createTestHolderContext(db);
  const services = createHolderServices(ctx);
  await services.matching.start();
  if (fresh) {
    const started = performance.now();
    for (let seed = 1; seed * 20_000 <= OFFERS; seed++) {
      const batch = demoCatalogue({ seed, count: 20_000 }).map((offer, i) => ({
        ...offer,
        source: { ...offer.source, ref: `bench-${seed}-${i}` },
      }));
      await services.offers.importCatalogue(batch);
    }
    console.log(
      `built ${OFFERS.toLocaleString("en-US")} offers in ${((performance.now() - started) / 1000).toFixed(0)} s`,
    );
  }
  const cell = { category: "vehicles", country: "SK", budgetBand: "EUR-10000-20000" } as const;

  const searchTimes: number[] = [];
  const once = async () => {
    const start = performance.now();
    await services.offers.search(STATEMENT, 20);
    searchTimes.push(performance.now() - start);
  };
  for (let i = 0; i < 3; i++) await once();

  /**
   * The cheap call every 10 ms on a fixed schedule; each latency counts from when the call was due,
   * so time the event loop was held by something else counts too.
   */
  async function probe(durationMs: number): Promise<number[]> {
    const latencies: number[] = [];
    const start = performance.now();
    for (let due = start; due < start + durationMs; due += PROBE_EVERY_MS) {
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      await services.demand.summary(cell);
      latencies.push(performance.now() - due);
    }
    return latencies;
  }

  const alone = await probe(FLOOD_MS / 2);
  searchTimes.length = 0;
  let flooding = true;
  const flooders = Array.from({ length: FLOODERS }, async () => {
    while (flooding) await once();
  });
  const flooded = await probe(FLOOD_MS);
  flooding = false;
  await Promise.all(flooders);

  console.log(`\nA cheap call (demand summary) at ${OFFERS.toLocaleString("en-US")} offers, SQLite`);
  const row = (name: string, values: number[]) =>
    console.log(
      `  ${name.padEnd(44)} p50 ${ms(percentile(values, 50)).padStart(10)}  p99 ${ms(percentile(values, 99)).padStart(10)}  (${values.length} calls)`,
    );
  row(`while ${FLOODERS} clients flood searches (ours)`, flooded);
  row("alone (baseline)", alone);
  console.log(
    `  p99 ours/baseline = ${(percentile(flooded, 99) / percentile(alone, 99)).toFixed(2)}×; goal ≤ 50 ms`,
  );
  row(`one search "${STATEMENT}" during the flood`, searchTimes);
  await db.close();
}
