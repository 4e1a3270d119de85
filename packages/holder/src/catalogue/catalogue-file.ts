/**
 * Catalogue files for `doorbell catalogue import FILE.json|FILE.csv`. Every problem is reported
 * with the line it is on (1-based), all of them at once (up to 100), so a file is fixed in one
 * pass. Files are streamed: memory stays bounded whatever the file's size, so an
 * import reads the file twice — once to check every offer, once to import them.
 *
 * JSON: an array of offers in the catalogue offer shape:
 *
 *     [{ "source": { "ref": "A-1001", "seller": "Autobazár Zvolen" },
 *        "title": "Škoda Octavia Combi 2.0 TDI", "category": "vehicles",
 *        "price": { "amount": 14900, "currency": "EUR" },
 *        "location": { "country": "SK", "region": "SK-BC" },
 *        "url": "https://catalogue.example/vehicles/A-1001",
 *        "attributes": { "make": "Škoda", "model": "Octavia", "year": 2018, "mileageKm": 142000, "fuel": "diesel" },
 *        "publishedAt": "2026-11-20T08:00:00Z" }]
 *
 * `source.kind` may be left out (it is "catalogue"); the CSV's short names work too ("ref",
 * "price" with "currency", "country", "make", ...). A problem is reported at the line where its
 * offer starts.
 *
 * CSV (RFC 4180: comma-separated, or semicolon-separated when the header has semicolons and no
 * commas; "double quotes" around fields with separators, quotes or line breaks; UTF-8), one offer
 * per record after a header row naming the columns in any order:
 *
 *     column                      required  meaning
 *     ref (source.ref)            yes       the catalogue's own id of the listing (unique in the file)
 *     title                       yes
 *     category                    yes       vehicles | property
 *     price (price.amount)        yes       whole currency units, digits only (12500)
 *     currency (price.currency)   yes       EUR | CZK
 *     country (location.country) yes       SK | CZ
 *     region (location.region)              ISO 3166-2 code of the country (SK-BL, CZ-10, ...)
 *     description
 *     url                                   absolute http(s) URL of the listing
 *     publishedAt                           ISO 8601 date-time with a zone (default: when the
 *                                           holder first saw the offer; kept on re-import)
 *     seller (source.seller)
 *     make, model, year, mileageKm, fuel    vehicles (fuel: petrol|diesel|hybrid|electric|lpg)
 *     kind, rooms, areaM2                   property (kind: flat|house|land; areaM2 may be 72.5)
 *
 * Column names ignore case, and snake_case works too (published_at, mileage_km, area_m2);
 * attributes may also be named attributes.make and so on. An empty cell means the field is not given.
 */
import { createReadStream } from "node:fs";
import type { CatalogueOfferInput } from "../model/services.js";
import { HolderError } from "../model/types.js";
import { csvEntries } from "./catalogue-csv.js";
import { type CatalogueFileProblem, type Entry, Problems } from "./catalogue-entries.js";
import { jsonEntries } from "./catalogue-json.js";
import { seenRefs } from "./catalogue-refs.js";
import { checkCatalogueOffer } from "./validate.js";

export type { CatalogueFileProblem } from "./catalogue-entries.js";

export type CatalogueFormat = "json" | "csv";

export interface ParsedCatalogue {
  offers: CatalogueOfferInput[];
  problems: CatalogueFileProblem[];
}

export interface ParseCatalogueOptions {
  format: CatalogueFormat;
  /** Stop collecting after this many problems (default 100). */
  maxProblems?: number;
}

/** The format a path names by its extension, or undefined. */
export function catalogueFormatFromPath(path: string): CatalogueFormat | undefined {
  const lower = path.toLowerCase();
  if (lower.endsWith(".json")) return "json";
  if (lower.endsWith(".csv")) return "csv";
  return undefined;
}

export function formatProblems(problems: readonly CatalogueFileProblem[]): string {
  return problems.map((p) => `line ${p.line}: ${p.message}`).join("\n");
}

/** Parses catalogue text already in memory; `problems` is empty when every offer is valid. */
export async function parseCatalogueFile(
  text: string,
  options: ParseCatalogueOptions,
): Promise<ParsedCatalogue> {
  const problems = new Problems(options.maxProblems ?? 100);
  const offers: CatalogueOfferInput[] = [];
  for await (const offer of checkedOffers(withoutBom(once(text)), options.format, problems))
    offers.push(offer);
  return { offers, problems: sorted(problems) };
}

/** parseCatalogueFile, throwing ERR_HOLDER_INVALID with one "line N: ..." per problem. */
export async function readCatalogueFile(
  text: string,
  options: ParseCatalogueOptions,
): Promise<CatalogueOfferInput[]> {
  const parsed = await parseCatalogueFile(text, options);
  if (parsed.problems.length > 0) throw fileProblems(parsed.problems, options);
  return parsed.offers;
}

/**
 * Reads the file at `path` through once, checking every offer without keeping them: resolves
 * with how many offers it holds, or throws ERR_HOLDER_INVALID listing the problems by line.
 * Errors opening or reading the file (ENOENT, EACCES) are thrown as they are.
 */
export async function checkCatalogueFile(
  path: string,
  options: ParseCatalogueOptions,
): Promise<{ offers: number }> {
  const problems = new Problems(options.maxProblems ?? 100);
  let offers = 0;
  for await (const _ of checkedOffers(fileText(path, problems), options.format, problems)) offers++;
  if (problems.list.length > 0) throw fileProblems(sorted(problems), options);
  return { offers };
}

/**
 * The offers of the file at `path`, one at a time, for importCatalogue after checkCatalogueFile
 * passed. Checked again as they are read: a file changed in between throws at its first problem.
 */
export async function* streamCatalogueFile(
  path: string,
  options: ParseCatalogueOptions,
): AsyncGenerator<CatalogueOfferInput> {
  const problems = new Problems(1);
  // Refs were checked for repeats by checkCatalogueFile; not kept again while importing.
  for await (const offer of checkedOffers(fileText(path, problems), options.format, problems, false)) {
    if (problems.list.length > 0) break;
    yield offer;
  }
  if (problems.list.length > 0) throw fileProblems(problems.list, options);
}

function fileProblems(
  problems: readonly CatalogueFileProblem[],
  options: ParseCatalogueOptions,
): HolderError {
  const most = problems.length === (options.maxProblems ?? 100) ? "at least " : "";
  return new HolderError(
    "ERR_HOLDER_INVALID",
    `the catalogue file has ${most}${problems.length} problem(s):\n${formatProblems(problems)}`,
  );
}

// File order: a problem found late by the parser (an unclosed quote) may name an earlier line.
const sorted = (problems: Problems): CatalogueFileProblem[] =>
  [...problems.list].sort((a, b) => a.line - b.line);

/** Valid offers in file order; every problem (validation, repeated refs) goes to `problems`. */
async function* checkedOffers(
  text: AsyncIterable<string>,
  format: CatalogueFormat,
  problems: Problems,
  repeats = true,
): AsyncGenerator<CatalogueOfferInput> {
  const entries: AsyncIterable<Entry> =
    format === "json" ? jsonEntries(text, problems) : csvEntries(text, problems);
  // Every ref seen and its line: the only thing kept per offer, on disk past the first 50,000.
  const refs = repeats ? seenRefs() : undefined;
  try {
    for await (const entry of entries) {
      const checked = checkCatalogueOffer(entry.value, "");
      for (const message of checked.problems) problems.add(entry.line, entry.rename(message));
      if (!checked.value) continue;
      const first = refs?.firstLine(checked.value.source.ref, entry.line);
      if (first !== undefined) {
        problems.add(
          entry.line,
          `ref ${JSON.stringify(checked.value.source.ref)} repeats the offer on line ${first}`,
        );
        continue;
      }
      yield checked.value;
    }
  } finally {
    refs?.close();
  }
}

async function* once(text: string): AsyncGenerator<string> {
  yield text;
}

async function* withoutBom(text: AsyncIterable<string>): AsyncGenerator<string> {
  let first = true;
  for await (const chunk of text) {
    yield first && chunk.charCodeAt(0) === 0xfeff ? chunk.slice(1) : chunk;
    first = false;
  }
}

/** The file as UTF-8 text in 64 KiB chunks; bytes that are not UTF-8 end it with a problem at their line. */
async function* fileText(path: string, problems: Problems): AsyncGenerator<string> {
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });
  let line = 1;
  for await (const bytes of createReadStream(path, { highWaterMark: 64 * 1024 })) {
    let text: string;
    try {
      text = decoder.decode(bytes as Buffer, { stream: true });
    } catch {
      problems.add(line, "the file is not UTF-8 text here (save it as UTF-8)");
      return;
    }
    for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) line++;
    if (text !== "") yield text;
  }
  try {
    const rest = decoder.decode();
    if (rest !== "") yield rest;
  } catch {
    problems.add(line, "the file ends in the middle of a UTF-8 character");
  }
}
