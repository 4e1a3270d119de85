import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { Session } from "node:inspector/promises";
import os from "node:os";
import path from "node:path";
import { type Database, type Kysely, openDatabase, sql } from "@doorbell/store";
import { demoCatalogue, seededRandom } from "../packages/holder/src/catalogue/demo-catalogue.js";
import { createOfferService } from "../packages/holder/src/catalogue/service.js";
import {
  createMatchingService,
  FILTER_COLUMNS,
  fits,
  type IntentFilter,
  intentFilter,
  type MatchingService,
  offerFacts,
} from "../packages/holder/src/matching/index.js";
import type { CatalogueOfferInput } from "../packages/holder/src/model/services.js";
import type { HolderTables } from "../packages/holder/src/model/tables.js";
import type { Offer } from "../packages/holder/src/model/types.js";
import { createTestHolderContext } from "../packages/holder/src/testing.js";
import { compare, printComparison } from "./harness.js";

// Matching throughput for new offers against 100,000 and 1,000,000 active intents on SQLite.
//
// In the order they run:
// 1. End to end: importCatalogue of new offers (insert offers + full-text index + find the intents
//    they match, which are told; 500 offers per transaction) beside the same import where each
//    offer's intents are found with a plain SQL query on the (status, category, country) index,
//    filtered in SQL by region and budget and in code by the criteria. Matches are not written one
//    row per (offer, intent) — reading applies the rule (docs/decisions.md, "Matches are read, not
//    written") — so the cost moves to reads, measured in 2. The RSS printed after it is the
//    process serving the index; the linear scan's copy of the intents (3.) comes later.
// 2. Reads after the import: intent_list_matches' read for intents that got matches, the first
//    page (no since) and the usual empty answer (since = the newest deliveredAt).
// 3. Lookup: the in-memory index (matchOffer) beside a linear scan applying the same rule to the
//    same intents in memory — interleaved rounds, medians.
//
// Intents are written straight into holder_intents (large transactions, not through publish). Each
// is derived from a random demo-catalogue offer, as a specific buyer would state it: vehicles name
// the make (97 %) and model (85 % of those), a minimum year (90 %), often mileage and fuel; property
// names the kind, usually minimum rooms and area; most name the offer's region (90–95 %); the
// budget is 0.85–1.15 × that offer's price (97 %). Matches per new offer grow with the number of
// intents (about 130 at 100,000, 1,370 at 1,000,000, mostly flats: a region is a large area), and
// recording them dominates the end-to-end figure, so both figures are printed with that density.
//
// Two intent mixes (DOORBELL_BENCH_HOLDER_MIXES=broad,specific; both by default):
// - "broad" (the figures above; a stress case): every intent is a copy of one of only 20,000
//   demo offers from the same generator as the new offers, so demand sits exactly where supply is
//   densest; 40 % of property intents name no minimum area and a minimum of rooms may be one
//   fewer than the offer's. At 1,000,000 intents each new offer fits ≈0.13 % of all intents
//   (≈1,300), a flat many more.
// - "specific" (realistic selectivity): the same market, but each intent says what one buyer
//   says after a short conversation with an assistant: a car's make, model and minimum year,
//   usually fuel and mileage; a property's kind, its rooms and minimum area; a region; a budget
//   of 0.9–1.1 × the price. Cars then fit a few intents per 100,000; property stays dense even so,
//   because the rule itself is broad there (rooms and area are minimums, the budget a maximum,
//   the area a whole region), so a flat fits every buyer of its region who wants no more than it
//   has for no more than it costs. Matches per offer are printed per kind for both mixes.

const SIZES = (process.env.DOORBELL_BENCH_HOLDER_SIZES ?? "100000,1000000")
  .split(",")
  .map((n) => Number(n.trim()))
  .filter((n) => Number.isSafeInteger(n) && n > 0);
const INSERT_CHUNK = 10_000;
/** A directory: the load and the import are CPU-profiled there, and their top functions printed. */
const PROFILE_DIR = process.env.DOORBELL_BENCH_HOLDER_PROFILE;
const MB = 1024 * 1024;

const rssMb = () => Math.round(process.memoryUsage().rss / MB);
const fmt = (n: number) => Math.round(n).toLocaleString("en-US");
const signed = (n: number) => (n < 0 ? `−${fmt(-n)}` : `+${fmt(n)}`);

function between(random: () => number, min: number, max: number): number {
  return min + (max - min) * random();
}

type Mix = "broad" | "specific";

const MIXES = (process.env.DOORBELL_BENCH_HOLDER_MIXES ?? "broad,specific")
  .split(",")
  .map((m) => m.trim())
  .filter((m): m is Mix => m === "broad" || m === "specific");

/** Runs `fn`, CPU-profiled when DOORBELL_BENCH_HOLDER_PROFILE names a directory. */
async function profiled<T>(name: string, fn: () => Promise<T>): Promise<T> {
  if (PROFILE_DIR === undefined) return fn();
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.start");
  try {
    return await fn();
  } finally {
    const { profile } = await session.post("Profiler.stop");
    session.disconnect();
    fs.mkdirSync(PROFILE_DIR, { recursive: true });
    fs.writeFileSync(path.join(PROFILE_DIR, `${name}.cpuprofile`), JSON.stringify(profile));
    printTopFunctions(name, profile);
  }
}

/** The functions with the most self time in a CPU profile (samples × their intervals). */
function printTopFunctions(
  name: string,
  profile: { nodes: ProfileNode[]; samples?: number[]; timeDeltas?: number[] },
): void {
  const frames = new Map<number, string>();
  for (const node of profile.nodes) {
    const { functionName, url } = node.callFrame;
    frames.set(node.id, `${functionName || "(anonymous)"} ${url.split("/").slice(-2).join("/")}`);
  }
  const self = new Map<string, number>();
  let total = 0;
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  for (let i = 0; i < samples.length; i++) {
    const frame = frames.get(samples[i] as number) ?? "?";
    const us = deltas[i] ?? 0;
    self.set(frame, (self.get(frame) ?? 0) + us);
    total += us;
  }
  console.log(`  profile ${name}: ${(total / 1e6).toFixed(2)} s sampled; self time:`);
  for (const [frame, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 12)) {
    console.log(
      `    ${((100 * us) / total).toFixed(1).padStart(5)} % ${(us / 1000).toFixed(0).padStart(6)} ms  ${frame}`,
    );
  }
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
}

/** One intent row (the columns matching reads, plus the required ones) shaped after a market offer. */
function intentLike(
  offer: CatalogueOfferInput,
  random: () => number,
  index: number,
  now: number,
  mix: Mix,
): unknown[] {
  if (mix === "specific") return specificIntentLike(offer, random, index, now);
  const a = offer.attributes;
  const criteria: Record<string, string | number> = { category: offer.category };
  if (offer.category === "vehicles") {
    if (random() < 0.97) {
      criteria.make = a.make as string;
      if (random() < 0.85) criteria.model = a.model as string;
    }
    if (random() < 0.9) criteria.yearMin = Number(a.year) - Math.floor(random() * 2);
    if (random() < 0.7)
      criteria.mileageMaxKm = Math.ceil((Number(a.mileageKm) * between(random, 1, 1.2)) / 10_000) * 10_000;
    if (random() < 0.6) criteria.fuel = a.fuel as string;
  } else {
    if (random() < 0.98) criteria.kind = a.kind as string;
    if (a.rooms !== undefined && random() < 0.85)
      criteria.roomsMin = Math.max(1, Number(a.rooms) - Math.floor(random() * 2));
    if (random() < 0.6) criteria.areaMinM2 = Math.floor(Number(a.areaM2) * between(random, 0.85, 1));
  }
  const region =
    random() < (offer.category === "vehicles" ? 0.9 : 0.95) ? (offer.location.region ?? null) : null;
  const budget = random() < 0.97 ? Math.round(offer.price.amount * between(random, 0.85, 1.15)) : null;
  return intentRow(offer, criteria, region, budget, index, now);
}

/**
 * The "specific" mix: the criteria one buyer gives after a short conversation. A car: make and
 * model (always), minimum year (95 %: that year or one before), fuel (80 %), mileage (75 %); a
 * property: kind (always), rooms (95 %: the offer's own count), minimum area (85 %: 0.9–1 ×);
 * the region (97 %); a budget of 0.9–1.1 × the price (97 %).
 */
function specificIntentLike(
  offer: CatalogueOfferInput,
  random: () => number,
  index: number,
  now: number,
): unknown[] {
  const a = offer.attributes;
  const criteria: Record<string, string | number> = { category: offer.category };
  if (offer.category === "vehicles") {
    criteria.make = a.make as string;
    criteria.model = a.model as string;
    if (random() < 0.95) criteria.yearMin = Number(a.year) - Math.floor(random() * 2);
    if (random() < 0.8) criteria.fuel = a.fuel as string;
    if (random() < 0.75)
      criteria.mileageMaxKm = Math.ceil((Number(a.mileageKm) * between(random, 1, 1.2)) / 10_000) * 10_000;
  } else {
    criteria.kind = a.kind as string;
    if (a.rooms !== undefined && random() < 0.95) criteria.roomsMin = Number(a.rooms);
    if (random() < 0.85) criteria.areaMinM2 = Math.floor(Number(a.areaM2) * between(random, 0.9, 1));
  }
  const region = random() < 0.97 ? (offer.location.region ?? null) : null;
  const budget = random() < 0.97 ? Math.round(offer.price.amount * between(random, 0.9, 1.1)) : null;
  return intentRow(offer, criteria, region, budget, index, now);
}

function intentRow(
  offer: CatalogueOfferInput,
  criteria: Record<string, string | number>,
  region: string | null,
  budget: number | null,
  index: number,
  now: number,
): unknown[] {
  return [
    `int_${String(index).padStart(8, "0")}`,
    `bench-${index}`,
    "active",
    "bench intent",
    JSON.stringify(criteria),
    offer.category,
    offer.location.country,
    region,
    budget,
    budget === null ? null : offer.price.currency,
    now + 30 * 24 * 3_600_000,
    "private",
    now,
    now,
    now, // matching_since: active, criteria in force from now
  ];
}

export async function insertIntents(
  store: Database<HolderTables>,
  count: number,
  now: number,
  mix: Mix,
): Promise<void> {
  const pool = demoCatalogue({ seed: 7, count: 20_000 });
  const random = seededRandom(42);
  for (let start = 0; start < count; start += INSERT_CHUNK) {
    const rows: unknown[][] = [];
    for (let i = start; i < Math.min(count, start + INSERT_CHUNK); i++) {
      rows.push(
        intentLike(pool[Math.floor(random() * pool.length)] as CatalogueOfferInput, random, i, now, mix),
      );
    }
    const col = (i: number) => sql.raw(`json_extract(value, '$[${i}]')`);
    await store.transaction(async (trx) => {
      await sql`insert into holder_intents (id, code_hash, status, statement, criteria_json, category, country,
          region, budget_amount, budget_currency, valid_until, visibility, created_at, updated_at, matching_since)
        select ${sql.join(Array.from({ length: 15 }, (_, i) => col(i)))}
        from json_each(${JSON.stringify(rows)})`.execute(trx);
    });
  }
}

/** New offers with refs that are not in the database yet (`tag` keeps two imports of the same offers apart). */
export function newOffers(seed: number, count: number, tag = "bench"): CatalogueOfferInput[] {
  return demoCatalogue({ seed, count }).map((offer, i) => ({
    ...offer,
    source: { ...offer.source, ref: `${tag}-${seed}-${i}` },
  }));
}

/**
 * The baseline's matcher: a plain SQL query per offer finds its intents, criteria checked in code.
 * Like ours it writes nothing per (offer, intent): matches are read, not written.
 */
function sqlPerOfferMatching(
  now: () => number,
): Pick<MatchingService, "start" | "notify" | "matchNewOffers" | "newRound" | "catchUpSince"> {
  // Returns FoundMatches, as ours does.
  return {
    start: async () => ({ activeIntents: 0 }),
    notify: async () => {},
    // It keeps no index that could have missed an intent activated during the import.
    catchUpSince: async () => {},
    newRound: () => 0,
    async matchNewOffers(trx: Kysely<HolderTables>, offers: readonly Offer[]) {
      const intents = new Set<string>();
      let count = 0;
      for (const offer of offers) {
        const facts = offerFacts(offer);
        const rows = await trx
          .selectFrom("holder_intents")
          .select(FILTER_COLUMNS)
          .where("status", "=", "active")
          .where("category", "=", offer.category)
          .where("country", "=", offer.location.country)
          .where((eb) => eb.or([eb("region", "is", null), eb("region", "=", offer.location.region ?? "")]))
          .where((eb) =>
            eb.or([
              eb("budget_amount", "is", null),
              eb.and([
                eb("budget_currency", "=", offer.price.currency),
                eb("budget_amount", ">=", offer.price.amount),
              ]),
            ]),
          )
          .execute();
        for (const row of rows) {
          const filter = intentFilter(row);
          if (filter && fits(filter, facts, now())) {
            intents.add(row.id);
            count++;
          }
        }
      }
      const firstInRound = [...intents];
      return { deliveredAt: now(), count, intents: firstInRound, firstInRound };
    },
  };
}

const MIX_LABEL: Record<Mix, string> = {
  broad: "broad intents (stress case: demand copies the densest supply)",
  specific: "specific intents (realistic selectivity, see the note at the top)",
};

async function benchSize(size: number, mix: Mix): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-bench-holder-"));
  const db = await openDatabase({ url: path.join(dir, "holder.sqlite") });
  try {
    const now = Date.now();
    const ctx = await createTestHolderContext(db, Date.now);
    const store = ctx.store;
    const cacheMb = Number(process.env.DOORBELL_BENCH_SQLITE_CACHE_MB ?? 0);
    if (cacheMb > 0) await sql.raw(`pragma cache_size = -${Math.round(cacheMb * 1024)}`).execute(store.db);
    const cache = cacheMb > 0 ? `, cache_size ${cacheMb} MB` : "";
    console.log(
      `\n--- ${fmt(size)} active intents, ${MIX_LABEL[mix]} (SQLite, WAL, synchronous=FULL${cache}) ---`,
    );
    let t = performance.now();
    // Active for a while, as a million intents are: an import's end catches up on the intents
    // activated within a minute of its start (CLOCK_SKEW_MS), one by one, and these would all be.
    await insertIntents(store, size, now - 10 * 60_000, mix);
    console.log(`  written straight into holder_intents in ${((performance.now() - t) / 1000).toFixed(1)} s`);

    const rssBefore = rssMb();
    const matching = createMatchingService(ctx);
    t = performance.now();
    const { activeIntents } = await profiled(`load-${mix}-${size}`, () => matching.start());
    const loadS = (performance.now() - t) / 1000;
    const rssAfter = rssMb();
    console.log(
      `  index loaded: ${fmt(activeIntents)} intents in ${loadS.toFixed(1)} s; RSS ${fmt(rssAfter)} MB (${signed(rssAfter - rssBefore)} MB while loading)`,
    );

    // End to end, through the offer service, on SQLite.
    const offers = createOfferService(ctx, matching);
    const fresh = newOffers(12, 20_000);
    t = performance.now();
    const result = await profiled(`import-${mix}-${size}`, () => offers.importCatalogue(fresh));
    const oursS = (performance.now() - t) / 1000;
    const oursRate = fresh.length / oursS;

    const baselineService = createOfferService(
      ctx,
      sqlPerOfferMatching(Date.now) as unknown as MatchingService,
    );
    // The same offers as ours (the first ones), under other refs: the same matches to find and record.
    const baselineOffers = newOffers(12, size >= 1_000_000 ? 40 : 200, "baseline");
    t = performance.now();
    const baseline = await baselineService.importCatalogue(baselineOffers);
    const baseS = (performance.now() - t) / 1000;
    const baseRate = baselineOffers.length / baseS;
    printComparison(
      `  new offers imported, matched and recorded on SQLite, ${fmt(size)} intents (offers/s)`,
      [
        {
          name: `importCatalogue with the index (ours; ${fmt(fresh.length)} offers)`,
          opsPerSecond: oursRate,
        },
        {
          name: `same import, SQL query per offer (${fmt(baselineOffers.length)} offers)`,
          opsPerSecond: baseRate,
        },
      ],
    );
    const rssServing = rssMb();
    console.log(
      `  ours found ${fmt(result.matched)} matches (${(result.matched / fresh.length).toFixed(1)} per offer; their intents are told, nothing is written per match); ` +
        `baseline ${(baseline.matched / baselineOffers.length).toFixed(1)} per offer (its offers are ours' first ${baselineOffers.length}); RSS ${fmt(rssServing)} MB`,
    );
    await benchReads(matching, fresh);

    // The linear scan's own copy of the same intents, as a flat array: made after the import, so
    // that the RSS printed above is the index's and the import's, not this copy's.
    const filters: IntentFilter[] = [];
    let after = "";
    for (;;) {
      const rows = await store.db
        .selectFrom("holder_intents")
        .select(FILTER_COLUMNS)
        .where("status", "=", "active")
        .where("id", ">", after)
        .orderBy("id")
        .limit(10_000)
        .execute();
      for (const row of rows) {
        const filter = intentFilter(row);
        if (filter) filters.push(filter);
      }
      if (rows.length < 10_000) break;
      after = (rows.at(-1) as { id: string }).id;
    }
    const linear = (offer: Offer) => {
      const facts = offerFacts(offer);
      const at = Date.now();
      const out: string[] = [];
      for (const f of filters) if (fits(f, facts, at)) out.push(f.id);
      return out;
    };

    // Lookup only. Offers need ids for nothing here; the catalogue shape is enough.
    const probe = newOffers(11, 2_000) as unknown as Offer[];
    let matchesTotal = 0;
    const perCategory = new Map<string, { offers: number; matches: number }>();
    for (const offer of probe.slice(0, 300)) {
      const ours = matching.matchOffer(offer).sort();
      const theirs = linear(offer).sort();
      if (ours.join() !== theirs.join()) throw new Error("the index and the linear scan disagree");
      matchesTotal += ours.length;
      const kind = offer.category === "vehicles" ? "cars" : String(offer.attributes.kind ?? "property");
      const seen = perCategory.get(kind) ?? { offers: 0, matches: 0 };
      seen.offers += 1;
      seen.matches += ours.length;
      perCategory.set(kind, seen);
    }
    const byKind = [...perCategory]
      .map(([kind, seen]) => `${kind} ${(seen.matches / seen.offers).toFixed(1)}`)
      .join(", ");
    console.log(
      `  index and linear scan agree on 300 offers; ${(matchesTotal / 300).toFixed(1)} matching intents per offer on average ` +
        `(${((100 * matchesTotal) / 300 / size).toFixed(3)} % of all intents; per offer by kind: ${byKind})`,
    );
    let i = 0;
    let j = 0;
    const lookup = compare(
      [
        ["index lookup (ours)", () => matching.matchOffer(probe[i++ % probe.length] as Offer)],
        ["linear scan, same rule, same intents", () => linear(probe[j++ % probe.length] as Offer)],
      ],
      { rounds: 7, roundMs: 300 },
    );
    printComparison(`  new offer → matching intents, in memory, ${fmt(size)} intents (offers/s)`, lookup);
    filters.length = 0;

    const lookupRate = lookup[0]?.opsPerSecond ?? 0;
    if (size >= 1_000_000) {
      const goal = mix === "specific" ? 10_000 : 5_000;
      const verdict = (met: boolean) => (met ? "MET" : "MISSED");
      console.log(
        `  goals at 1,000,000 intents: end to end ${fmt(oursRate)} offers/s (≥ ${fmt(goal)}) ${verdict(oursRate >= goal)}; ` +
          `lookup ${fmt(lookupRate)} offers/s; index loaded in ${loadS.toFixed(1)} s (≤ 5 s) ${verdict(loadS <= 5)}; ` +
          `RSS after the import ${fmt(rssServing)} MB (≤ 1,024) ${verdict(rssServing <= 1024)}; ` +
          `RSS with the linear scan's copy too ${fmt(rssMb())} MB`,
      );
    }
  } finally {
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The cost that moved to reads: intent_list_matches' read (MatchingService.listMatches) for 200
 * intents that the import gave matches — the first page (no since), then the usual empty answer.
 */
async function benchReads(
  matching: MatchingService,
  imported: readonly CatalogueOfferInput[],
): Promise<void> {
  const intents = new Set<string>();
  for (const offer of imported) {
    for (const id of matching.matchOffer(offer as unknown as Offer)) {
      intents.add(id);
      if (intents.size >= 200) break;
    }
    if (intents.size >= 200) break;
  }
  const ids = [...intents];
  const newest = new Map<string, string>();
  let listed = 0;
  let t = performance.now();
  for (const id of ids) {
    const page = await matching.listMatches({ kind: "intent-code", intentId: id });
    listed += page.matches.length;
    newest.set(id, page.matches.at(-1)?.deliveredAt ?? new Date(0).toISOString());
  }
  const firstMs = (performance.now() - t) / ids.length;
  // An intent with more than a page: read on to its newest match, as an agent would.
  for (const id of ids) {
    for (;;) {
      const page = await matching.listMatches({ kind: "intent-code", intentId: id }, id, newest.get(id));
      newest.set(id, page.matches.at(-1)?.deliveredAt ?? (newest.get(id) as string));
      if (!page.more) break;
    }
  }
  const rounds = 20;
  t = performance.now();
  for (let round = 0; round < rounds; round++) {
    for (const id of ids)
      await matching.listMatches({ kind: "intent-code", intentId: id }, id, newest.get(id));
  }
  const emptyPerS = (rounds * ids.length) / ((performance.now() - t) / 1000);
  console.log(
    `  reads: first page ${firstMs.toFixed(2)} ms per intent (${(listed / ids.length).toFixed(0)} matches on average, ` +
      `${ids.length} intents); empty answer (since = newest) ${fmt(emptyPerS)} reads/s`,
  );
}

export async function benchHolderMatching(): Promise<void> {
  const runs = MIXES.flatMap((mix) => SIZES.map((size) => ({ mix, size })));
  const only = runs.length === 1 ? runs[0] : undefined;
  if (only !== undefined) {
    console.log(
      `Node ${process.version}, ${os.cpus().length} CPUs; intents derived from demo-catalogue offers; ` +
        "new offers from another demo seed.",
    );
    await benchSize(only.size, only.mix);
    return;
  }
  // Each size and mix in a process of its own, as a holder serves one set of intents: in one
  // process the RSS after a run carried what the runs before it left (Node 24 kept ~500 MB).
  for (const { mix, size } of runs) {
    const child = spawnSync(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
      stdio: "inherit",
      env: { ...process.env, DOORBELL_BENCH_HOLDER_SIZES: String(size), DOORBELL_BENCH_HOLDER_MIXES: mix },
    });
    if (child.status !== 0) throw new Error(`the ${mix} run at ${fmt(size)} intents failed`);
  }
}
