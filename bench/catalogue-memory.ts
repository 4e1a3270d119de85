/**
 * Issue 16 item 6: importing a large catalogue file keeps memory bounded. A 100 MB CSV and a
 * 100 MB JSON catalogue (DOORBELL_BENCH_CATALOGUE_MB), each with a bad last offer, are checked in
 * a child process each and the child's peak RSS printed: ours streams the file (checkCatalogueFile,
 * which must still name the bad line), then reads it again as the import does (streamCatalogueFile).
 * The baseline, measured in the same run, reads the whole file into memory and parses it there
 * (parseCatalogueFile on the text), as the import did before. Both load the built reader only.
 *
 * Then the whole import: the built `doorbell catalogue import` of the same CSV without its bad
 * line, into a new SQLite file and (with DOORBELL_BENCH_PG_URL or DOORBELL_TEST_PG_URL) a new
 * PostgreSQL database, each a child process reporting its own peak RSS. Beside it: the same command
 * with V8's default heap growth (how the import ran before), and a one-offer file (what the
 * program itself costs).
 */
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { newPostgresDatabase } from "./harness.js";

const MB = Number(process.env.DOORBELL_BENCH_CATALOGUE_MB ?? 100);
const HERE = path.dirname(new URL(import.meta.url).pathname);
const ROOT = path.join(HERE, "..");
// The built reader (npm run bench builds first): what the CLI runs, without a TypeScript loader.
const SOURCE = path.join(ROOT, "packages/holder/dist/offers/catalogue-file.js");
const CLI = path.join(ROOT, "packages/cli/bin/doorbell.js");
// Loaded before the CLI: prints the process's peak RSS as it exits.
const REPORT_PEAK = `data:text/javascript,process.on("exit",()=>process.stderr.write("\\npeak-rss-kib "+process.resourceUsage().maxRSS+"\\n"))`;

const description = "Well kept, full service history, second owner, winter tyres, towbar. ".repeat(2);

/** The header and first offer of the CSV: a one-offer file, to measure the program itself. */
let firstOffer = "";

function writeFiles(dir: string): { csv: string; json: string; valid: string; offers: number } {
  const csv = path.join(dir, `catalogue-${MB}mb.csv`);
  const valid = path.join(dir, `catalogue-${MB}mb-valid.csv`);
  const json = path.join(dir, `catalogue-${MB}mb.json`);
  const target = MB * 1024 * 1024;
  let offers = 0;
  const c = fs.openSync(csv, "w");
  const v = fs.openSync(valid, "w");
  const j = fs.openSync(json, "w");
  const header =
    "ref,title,description,category,price,currency,country,region,make,model,year,mileageKm,fuel\n";
  fs.writeSync(c, header);
  fs.writeSync(v, header);
  firstOffer = header;
  fs.writeSync(j, "[\n");
  let size = 0;
  for (let i = 0; size < target; i++, offers++) {
    const line = `R-${i},Škoda Octavia ${i},"${description}",vehicles,${9000 + (i % 9000)},EUR,SK,SK-BL,Škoda,Octavia,${2000 + (i % 25)},${i % 300000},diesel\n`;
    fs.writeSync(c, line);
    fs.writeSync(v, line); // the same offers without the bad one, for the whole import
    if (i === 0) firstOffer += line;
    size += line.length;
    const offer = `${i === 0 ? "" : ",\n"}{"source":{"ref":"R-${i}"},"title":"Škoda Octavia ${i}","description":"${description}","category":"vehicles","price":{"amount":${9000 + (i % 9000)},"currency":"EUR"},"location":{"country":"SK","region":"SK-BL"},"attributes":{"make":"Škoda","model":"Octavia","year":${2000 + (i % 25)},"mileageKm":${i % 300000},"fuel":"diesel"}}`;
    fs.writeSync(j, offer);
  }
  // The bad last offer: a price with a space.
  fs.writeSync(c, `R-bad,Broken,"x",vehicles,12 000,EUR,SK,SK-BL,Škoda,Octavia,2019,1,diesel\n`);
  fs.writeSync(
    j,
    `,\n{"source":{"ref":"R-bad"},"title":"Broken","category":"vehicles","price":{"amount":"12 000","currency":"EUR"},"location":{"country":"SK"}}\n]\n`,
  );
  fs.closeSync(c);
  fs.closeSync(v);
  fs.closeSync(j);
  return { csv, json, valid, offers: offers + 1 };
}

/** Runs one reading in a fresh child process; returns its peak RSS (MB), seconds and first message line. */
function child(mode: "ours" | "baseline", file: string, format: "csv" | "json") {
  const script = `
    import fs from "node:fs";
    import { checkCatalogueFile, parseCatalogueFile, streamCatalogueFile } from ${JSON.stringify(SOURCE)};
    const started = performance.now();
    let message = "";
    if (${JSON.stringify(mode)} === "ours") {
      try { await checkCatalogueFile(${JSON.stringify(file)}, { format: "${format}" }); }
      catch (error) { message = error.message.split("\\n")[1] ?? error.message; }
      let n = 0;
      try { for await (const _ of streamCatalogueFile(${JSON.stringify(file)}, { format: "${format}" })) n++; }
      catch { message += " | import pass read " + n + " offers before the bad one"; }
    } else {
      const text = fs.readFileSync(${JSON.stringify(file)}, "utf8");
      const parsed = await parseCatalogueFile(text, { format: "${format}" });
      const last = parsed.problems.at(-1);
      message = last ? "line " + last.line + ": " + last.message : "";
    }
    const seconds = (performance.now() - started) / 1000;
    console.log(JSON.stringify({ rssMb: process.resourceUsage().maxRSS / 1024, seconds, message }));
  `;
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], {
    encoding: "utf8",
    maxBuffer: 1024 * 1024,
    cwd: ROOT,
  });
  return JSON.parse(out.trim().split("\n").at(-1) as string) as {
    rssMb: number;
    seconds: number;
    message: string;
  };
}

interface ImportRun {
  rssMb: number;
  seconds: number;
  summary: string;
}

/**
 * `doorbell catalogue import FILE` (the built CLI) in a child process, into `database` (a new SQLite
 * file under `dataDir` when undefined). `nodeArgs` go before the script (V8 flags).
 */
async function importRun(
  file: string,
  dataDir: string,
  database: string | undefined,
  nodeArgs: readonly string[] = [],
): Promise<ImportRun> {
  const args = [
    ...nodeArgs,
    `--import=${REPORT_PEAK}`,
    CLI,
    "catalogue",
    "import",
    file,
    "--data-dir",
    dataDir,
  ];
  if (database !== undefined) args.push("--database", database);
  const started = performance.now();
  const proc = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, DOORBELL_LOG_LEVEL: "warn", NODE_OPTIONS: "" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  proc.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    out += chunk;
  });
  proc.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    err = (err + chunk).slice(-16_000);
  });
  const code = await new Promise<number | null>((resolve) => proc.on("close", resolve));
  const seconds = (performance.now() - started) / 1000;
  const peak = /peak-rss-kib (\d+)/.exec(err);
  if (code !== 0 || peak === null) throw new Error(`catalogue import exited ${code}: ${err.trim()}`);
  const summary = out.split("\n")[1]?.trim() ?? "";
  return { rssMb: Number(peak[1]) / 1024, seconds, summary };
}

async function wholeImports(
  dir: string,
  valid: string,
  offers: number,
  readerCsvMb: number,
  baselineCsvMb: number,
) {
  const one = path.join(dir, "one-offer.csv");
  fs.writeFileSync(one, firstOffer);
  const pgUrl = (process.env.DOORBELL_BENCH_PG_URL ?? process.env.DOORBELL_TEST_PG_URL)?.trim();
  const engines: { name: string; database(run: string): Promise<{ url?: string; drop(): Promise<void> }> }[] =
    [{ name: "SQLite", database: async () => ({ drop: async () => {} }) }];
  if (pgUrl) {
    engines.push({
      name: "PostgreSQL",
      database: (run) => newPostgresDatabase(pgUrl, `doorbell_bench_import_${process.pid}_${run}`),
    });
  }
  console.log(
    `\nPeak RSS of the whole \`doorbell catalogue import\` (built CLI, one child process each) of the ${MB} MB CSV without its bad line (${(offers - 1).toLocaleString("en-US")} offers, no active intents)`,
  );
  const runs: [string, string, string[]][] = [
    ["ours", valid, []],
    ["the program itself (one-offer file)", one, []],
    // 0 leaves V8's own growth factor; the command sees the flag given and keeps it.
    ["before (V8 default heap growth)", valid, ["--heap-growing-percent=0"]],
  ];
  // Ours on every engine first: the longest runs (the befores) come last.
  const results = new Map<string, ImportRun[]>(engines.map((engine) => [engine.name, []]));
  for (const [n, [label, file, nodeArgs]] of runs.entries()) {
    for (const engine of engines) {
      const db = await engine.database(String(n));
      const dataDir = fs.mkdtempSync(path.join(dir, "holder-"));
      let r: ImportRun;
      try {
        r = await importRun(file, dataDir, db.url, nodeArgs);
      } finally {
        await db.drop();
        fs.rmSync(dataDir, { recursive: true, force: true });
      }
      results.get(engine.name)?.push(r);
      console.log(
        `  ${engine.name.padEnd(10)} ${label.padEnd(36)} ${r.rssMb.toFixed(0).padStart(6)} MB  ${r.seconds.toFixed(0).padStart(4)} s  ${r.summary}`,
      );
    }
  }
  for (const engine of engines) {
    const [ours, , before] = results.get(engine.name) as [ImportRun, ImportRun, ImportRun];
    console.log(
      `  ${engine.name.padEnd(10)} ours/before = ${(ours.rssMb / before.rssMb).toFixed(2)}×; ours/reader only = ${(ours.rssMb / readerCsvMb).toFixed(2)}×; ours/whole file in memory (reader) = ${(ours.rssMb / baselineCsvMb).toFixed(2)}×; goal ≤ 300 MB`,
    );
  }
  if (!pgUrl)
    console.log("  PostgreSQL skipped: set DOORBELL_BENCH_PG_URL or DOORBELL_TEST_PG_URL to run it.");
}

export async function benchCatalogueMemory(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-catalogue-"));
  try {
    const { csv, json, valid, offers } = writeFiles(dir);
    const csvPeaks = { reader: 0, baseline: 0 };
    console.log(
      `\nPeak RSS checking then streaming a ${MB} MB catalogue (${offers.toLocaleString("en-US")} offers, the last one bad), one child process each`,
    );
    for (const [format, file] of [
      ["csv", csv],
      ["json", json],
    ] as const) {
      const ours = child("ours", file, format);
      const baseline = child("baseline", file, format);
      const size = (fs.statSync(file).size / 1024 / 1024).toFixed(0);
      console.log(`  ${format.toUpperCase()} (${size} MB)`);
      console.log(
        `    ours: streamed (check + import read)  ${ours.rssMb.toFixed(0).padStart(6)} MB  ${ours.seconds.toFixed(0)} s  ${ours.message}`,
      );
      console.log(
        `    baseline: whole file in memory       ${baseline.rssMb.toFixed(0).padStart(6)} MB  ${baseline.seconds.toFixed(0)} s  ${baseline.message}`,
      );
      console.log(`    ours/baseline = ${(ours.rssMb / baseline.rssMb).toFixed(2)}×; goal ≤ 300 MB`);
      if (format === "csv") {
        csvPeaks.reader = ours.rssMb;
        csvPeaks.baseline = baseline.rssMb;
      }
    }
    if (process.env.DOORBELL_BENCH_CATALOGUE_IMPORT !== "0")
      await wholeImports(dir, valid, offers, csvPeaks.reader, csvPeaks.baseline);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
