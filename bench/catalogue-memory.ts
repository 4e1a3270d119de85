/**
 * Issue 16 item 6: importing a large catalogue file keeps memory bounded. A 100 MB CSV and a
 * 100 MB JSON catalogue (DOORBELL_BENCH_CATALOGUE_MB), each with a bad last offer, are checked in
 * a child process each and the child's peak RSS printed: ours streams the file (checkCatalogueFile,
 * which must still name the bad line), then reads it again as the import does (streamCatalogueFile).
 * The baseline, measured in the same run, reads the whole file into memory and parses it there
 * (parseCatalogueFile on the text), as the import did before.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const MB = Number(process.env.DOORBELL_BENCH_CATALOGUE_MB ?? 100);
const HERE = path.dirname(new URL(import.meta.url).pathname);
const SOURCE = path.join(HERE, "../packages/holder/src/offers/catalogue-file.ts");

const description = "Well kept, full service history, second owner, winter tyres, towbar. ".repeat(2);

function writeFiles(dir: string): { csv: string; json: string; offers: number } {
  const csv = path.join(dir, `catalogue-${MB}mb.csv`);
  const json = path.join(dir, `catalogue-${MB}mb.json`);
  const target = MB * 1024 * 1024;
  let offers = 0;
  const c = fs.openSync(csv, "w");
  const j = fs.openSync(json, "w");
  fs.writeSync(
    c,
    "ref,title,description,category,price,currency,country,region,make,model,year,mileageKm,fuel\n",
  );
  fs.writeSync(j, "[\n");
  let size = 0;
  for (let i = 0; size < target; i++, offers++) {
    const line = `R-${i},Škoda Octavia ${i},"${description}",vehicles,${9000 + (i % 9000)},EUR,SK,SK-BL,Škoda,Octavia,${2000 + (i % 25)},${i % 300000},diesel\n`;
    fs.writeSync(c, line);
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
  fs.closeSync(j);
  return { csv, json, offers: offers + 1 };
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
  const out = execFileSync(
    process.execPath,
    ["--conditions=@doorbell/source", "--import", "tsx", "--input-type=module", "-e", script],
    { encoding: "utf8", maxBuffer: 1024 * 1024, cwd: path.join(HERE, "..") },
  );
  return JSON.parse(out.trim().split("\n").at(-1) as string) as {
    rssMb: number;
    seconds: number;
    message: string;
  };
}

export async function benchCatalogueMemory(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-catalogue-"));
  try {
    const { csv, json, offers } = writeFiles(dir);
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
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
