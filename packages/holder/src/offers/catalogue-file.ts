import type { CatalogueOfferInput } from "../domain/services.js";
import { HolderError } from "../domain/types.js";
import { checkCatalogueOffer } from "./validate.js";

/**
 * Catalogue files for `doorbell catalogue import FILE.json|FILE.csv`. Every problem is reported
 * with the line it is on (1-based), all of them at once, so a file is fixed in one pass.
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
 * `source.kind` may be left out (it is "catalogue"); a problem is reported at the line where its
 * offer starts.
 *
 * CSV (RFC 4180: comma-separated, or semicolon-separated when the header has semicolons and no
 * commas; "double quotes" around fields with separators, quotes or line breaks; UTF-8), one offer
 * per record after a header row naming the columns in any order:
 *
 *     column       required  meaning
 *     ref          yes       the catalogue's own id of the listing (unique in the file)
 *     title        yes
 *     category     yes       vehicles | property
 *     price        yes       whole currency units, digits only (12500)
 *     currency     yes       EUR | CZK
 *     country      yes       SK | CZ
 *     region                 ISO 3166-2 code of the country (SK-BL, CZ-10, ...)
 *     description
 *     url                    absolute http(s) URL of the listing
 *     publishedAt            ISO 8601 date-time with a zone (default: the time of the import)
 *     seller
 *     make, model, year, mileageKm, fuel          vehicles (fuel: petrol|diesel|hybrid|electric|lpg)
 *     kind, rooms, areaM2                         property (kind: flat|house|land; areaM2 may be 72.5)
 *
 * Column names ignore case, and snake_case works too (published_at, mileage_km, area_m2). An empty
 * cell means the field is not given.
 */

export type CatalogueFormat = "json" | "csv";

export interface CatalogueFileProblem {
  line: number;
  message: string;
}

export interface ParsedCatalogue {
  offers: CatalogueOfferInput[];
  problems: CatalogueFileProblem[];
}

export interface ParseCatalogueOptions {
  format: CatalogueFormat;
  /** publishedAt for offers that give none (epoch ms; default Date.now()). */
  now?: number;
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

/** Parses a catalogue file; `problems` is empty when every offer is valid. */
export function parseCatalogueFile(text: string, options: ParseCatalogueOptions): ParsedCatalogue {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const now = options.now ?? Date.now();
  const problems = new Problems(options.maxProblems ?? 100);
  const entries =
    options.format === "json" ? jsonEntries(body, problems, now) : csvEntries(body, problems, now);
  const offers: CatalogueOfferInput[] = [];
  const refs = new Map<string, number>();
  for (const entry of entries) {
    const checked = checkCatalogueOffer(entry.value, "");
    for (const message of checked.problems) problems.add(entry.line, entry.rename(message));
    if (!checked.value) continue;
    const first = refs.get(checked.value.source.ref);
    if (first !== undefined) {
      problems.add(
        entry.line,
        `ref ${JSON.stringify(checked.value.source.ref)} repeats the offer on line ${first}`,
      );
      continue;
    }
    refs.set(checked.value.source.ref, entry.line);
    offers.push(checked.value);
  }
  // File order: syntax problems are found before the offers are checked.
  return { offers, problems: problems.list.sort((a, b) => a.line - b.line) };
}

/** parseCatalogueFile, throwing ERR_HOLDER_INVALID with one "line N: ..." per problem. */
export function readCatalogueFile(text: string, options: ParseCatalogueOptions): CatalogueOfferInput[] {
  const parsed = parseCatalogueFile(text, options);
  if (parsed.problems.length > 0) {
    throw new HolderError(
      "ERR_HOLDER_INVALID",
      `the catalogue file has ${parsed.problems.length === (options.maxProblems ?? 100) ? "at least " : ""}${parsed.problems.length} problem(s):\n${formatProblems(parsed.problems)}`,
    );
  }
  return parsed.offers;
}

export function formatProblems(problems: readonly CatalogueFileProblem[]): string {
  return problems.map((p) => `line ${p.line}: ${p.message}`).join("\n");
}

class Problems {
  readonly list: CatalogueFileProblem[] = [];
  constructor(readonly max: number) {}
  add(line: number, message: string): void {
    if (this.list.length < this.max) this.list.push({ line, message });
  }
}

interface Entry {
  line: number;
  value: unknown;
  /** Turns a validation message's field path into the file's own name for it. */
  rename(message: string): string;
}

function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

// ---------------------------------------------------------------------------------------------- JSON

function jsonEntries(text: string, problems: Problems, now: number): Entry[] {
  const entries: Entry[] = [];
  let i = skipSpace(text, 0);
  if (text[i] !== "[") {
    problems.add(lineAt(text, i), "a JSON catalogue is an array of offers: it must start with [");
    return entries;
  }
  i++;
  let line = lineAt(text, i);
  let lastLineOffset = i;
  const lineOf = (offset: number) => {
    // Incremental: offsets only grow.
    for (let k = lastLineOffset; k < offset; k++) if (text.charCodeAt(k) === 10) line++;
    lastLineOffset = offset;
    return line;
  };
  for (let index = 0; ; index++) {
    i = skipSpace(text, i);
    if (i >= text.length) {
      problems.add(lineOf(text.length), "the array is not closed: a ] is missing at the end");
      return entries;
    }
    if (text[i] === "]" && index === 0) break;
    const start = i;
    const end = scanValue(text, start);
    const startLine = lineOf(start);
    const slice = text.slice(start, end);
    if (slice.trim() === "") {
      problems.add(
        startLine,
        `offer ${index + 1}: a value is missing (two commas in a row, or a comma before ])`,
      );
    } else {
      try {
        const value: unknown = JSON.parse(slice);
        entries.push({ line: startLine, value: withFileDefaults(value, now), rename: (m) => m });
      } catch (error) {
        const { reason, position } = jsonSyntaxError((error as Error).message, slice);
        const at = position === undefined ? startLine : startLine + lineAt(slice, position) - 1;
        problems.add(at, `offer ${index + 1} is not valid JSON: ${reason}`);
      }
    }
    i = end;
    if (i >= text.length) {
      problems.add(lineOf(text.length), "the array is not closed: a ] is missing at the end");
      return entries;
    }
    if (text[i] === "]") break;
    i++; // the comma
  }
  const after = skipSpace(text, i + 1);
  if (after < text.length)
    problems.add(lineAt(text, after), "unexpected text after the closing ] of the array");
  return entries;
}

/**
 * V8's JSON.parse messages either name the position ("... in JSON at position 12") or quote up to
 * 10 characters either side of the bad token ("Unexpected token '}', ..."x", }" is not valid JSON");
 * this recovers the offset within `source` (when it can) and a message without the quoted source.
 */
function jsonSyntaxError(message: string, source: string): { reason: string; position?: number } {
  const named = /^(.*?) in JSON at position (\d+)/s.exec(message);
  if (named) return { reason: named[1] as string, position: Number(named[2]) };
  const quoted = /^(.*?), "(.*)" is not valid JSON$/s.exec(message);
  if (!quoted) return { reason: message };
  const reason = quoted[1] as string;
  const window = quoted[2] as string;
  const lead = window.startsWith("...");
  const trail = window.endsWith("...");
  const core = window.slice(lead ? 3 : 0, trail ? -3 : undefined);
  const found = source.indexOf(core);
  if (found < 0 || core === "") return { reason };
  if (lead) return { reason, position: found + 10 };
  if (trail) return { reason, position: found + Math.max(0, core.length - 10) };
  const token = /Unexpected token '(.)'/.exec(reason)?.[1];
  const at = token === undefined ? -1 : core.lastIndexOf(token);
  return { reason, position: found + Math.max(0, at) };
}

function skipSpace(text: string, from: number): number {
  let i = from;
  while (i < text.length && /\s/.test(text[i] as string)) i++;
  return i;
}

/** Where the value starting at `from` ends: the offset of the top-level , or ] after it (or the end). */
function scanValue(text: string, from: number): number {
  let depth = 0;
  let inString = false;
  for (let i = from; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === "\\") i++;
      else if (ch === '"') inString = false;
      else if (ch === "\n") inString = false; // an unterminated string: let JSON.parse report it
    } else if (ch === '"') inString = true;
    else if (ch === "[" || ch === "{") depth++;
    else if (ch === "]" || ch === "}") {
      if (depth === 0) return i;
      depth--;
    } else if (ch === "," && depth === 0) return i;
  }
  return text.length;
}

function withFileDefaults(value: unknown, now: number): unknown {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
  const offer = { ...(value as Record<string, unknown>) };
  const source = offer.source;
  if (typeof source === "object" && source !== null && !Array.isArray(source) && !("kind" in source)) {
    offer.source = { kind: "catalogue", ...source };
  }
  if (offer.publishedAt === undefined) offer.publishedAt = new Date(now).toISOString();
  return offer;
}

// ----------------------------------------------------------------------------------------------- CSV

type Column =
  | "ref"
  | "title"
  | "description"
  | "category"
  | "price"
  | "currency"
  | "country"
  | "region"
  | "url"
  | "publishedAt"
  | "seller"
  | "make"
  | "model"
  | "year"
  | "mileageKm"
  | "fuel"
  | "kind"
  | "rooms"
  | "areaM2";

const COLUMNS: readonly Column[] = [
  "ref",
  "title",
  "description",
  "category",
  "price",
  "currency",
  "country",
  "region",
  "url",
  "publishedAt",
  "seller",
  "make",
  "model",
  "year",
  "mileageKm",
  "fuel",
  "kind",
  "rooms",
  "areaM2",
];
const REQUIRED: readonly Column[] = ["ref", "title", "category", "price", "currency", "country"];
const INTEGER_ATTRIBUTES = new Set<Column>(["year", "mileageKm", "rooms"]);
const TEXT_ATTRIBUTES = new Set<Column>(["make", "model", "fuel", "kind"]);

const byName = new Map<string, Column>();
for (const column of COLUMNS) {
  byName.set(column.toLowerCase(), column);
  byName.set(column.replace(/([a-z])([A-Z0-9])/g, "$1_$2").toLowerCase(), column);
}

/** Validation paths → CSV column names. */
function renameForCsv(message: string): string {
  return message
    .replace(/^source\.ref\b/, "ref")
    .replace(/^source\.seller\b/, "seller")
    .replace(/^price\.amount\b/, "price")
    .replace(/^price\.currency\b/, "currency")
    .replace(/^location\.country\b/, "country")
    .replace(/^location\.region\b/, "region")
    .replace(/^attributes\./, "");
}

interface CsvRecord {
  line: number;
  fields: string[];
}

/** RFC 4180 records with the line each starts on; problems for unterminated quotes. */
function csvRecords(text: string, separator: string, problems: Problems): CsvRecord[] {
  const records: CsvRecord[] = [];
  let line = 1;
  let i = 0;
  while (i < text.length) {
    const startLine = line;
    const fields: string[] = [];
    let field = "";
    let quoted = false;
    let atFieldStart = true;
    let ended = false;
    while (i < text.length && !ended) {
      const ch = text[i] as string;
      if (quoted) {
        if (ch === '"') {
          if (text[i + 1] === '"') {
            field += '"';
            i += 2;
            continue;
          }
          quoted = false;
          i++;
          continue;
        }
        if (ch === "\n") line++;
        field += ch;
        i++;
        continue;
      }
      if (ch === '"' && atFieldStart) {
        quoted = true;
        atFieldStart = false;
        i++;
      } else if (ch === separator) {
        fields.push(field);
        field = "";
        atFieldStart = true;
        i++;
      } else if (ch === "\r" && text[i + 1] === "\n") {
        i++;
      } else if (ch === "\n") {
        line++;
        i++;
        ended = true;
      } else {
        if (ch === '"') {
          problems.add(
            line,
            'a " inside an unquoted field: quote the whole field and double the inner quote ("")',
          );
        }
        field += ch;
        atFieldStart = false;
        i++;
      }
    }
    if (quoted) {
      problems.add(startLine, 'a quoted field is not closed: a " is missing');
      return records;
    }
    fields.push(field);
    const blank = fields.length === 1 && (fields[0] as string).trim() === "";
    if (!blank) records.push({ line: startLine, fields });
  }
  return records;
}

function csvEntries(text: string, problems: Problems, now: number): Entry[] {
  const firstLine = text.slice(0, text.indexOf("\n") === -1 ? text.length : text.indexOf("\n"));
  const separator = firstLine.includes(";") && !firstLine.includes(",") ? ";" : ",";
  const records = csvRecords(text, separator, problems);
  const header = records.shift();
  if (header === undefined) {
    problems.add(1, `the CSV file is empty: it needs a header row (${REQUIRED.join(",")}, ...)`);
    return [];
  }
  const columns: (Column | undefined)[] = [];
  let headerOk = true;
  header.fields.forEach((raw, index) => {
    const name = raw.trim();
    const column = byName.get(name.toLowerCase());
    if (column === undefined) {
      problems.add(
        header.line,
        `column ${index + 1} "${name}" is not a catalogue column (known: ${COLUMNS.join(", ")})`,
      );
      headerOk = false;
    } else if (columns.includes(column)) {
      problems.add(header.line, `column "${column}" appears twice in the header`);
      headerOk = false;
    }
    columns.push(column);
  });
  for (const required of REQUIRED) {
    if (!columns.includes(required)) {
      problems.add(header.line, `the header has no "${required}" column (required: ${REQUIRED.join(", ")})`);
      headerOk = false;
    }
  }
  if (!headerOk) return [];

  const entries: Entry[] = [];
  for (const record of records) {
    if (record.fields.length !== columns.length) {
      problems.add(
        record.line,
        `this row has ${record.fields.length} fields but the header has ${columns.length} (a separator inside an unquoted field?)`,
      );
      continue;
    }
    const cells = new Map<Column, string>();
    record.fields.forEach((value, index) => {
      const trimmed = value.trim();
      if (trimmed !== "") cells.set(columns[index] as Column, trimmed);
    });
    const before = problems.list.length;
    const attributes: Record<string, string | number> = {};
    for (const [column, value] of cells) {
      if (TEXT_ATTRIBUTES.has(column)) attributes[column] = value;
      else if (INTEGER_ATTRIBUTES.has(column) || column === "areaM2") {
        const ok = column === "areaM2" ? /^\d+(\.\d+)?$/.test(value) : /^\d+$/.test(value);
        if (!ok) {
          problems.add(
            record.line,
            `${column} must be ${column === "areaM2" ? "a number such as 72.5" : "a whole number of digits"} (got ${JSON.stringify(value)})`,
          );
        } else attributes[column] = Number(value);
      }
    }
    const price = cells.get("price");
    let amount: number | string | undefined = price;
    if (price !== undefined) {
      if (/^\d+$/.test(price)) amount = Number(price);
      else
        problems.add(
          record.line,
          `price must be a whole number of digits such as 12500 (got ${JSON.stringify(price)})`,
        );
    }
    if (problems.list.length > before) continue;
    const region = cells.get("region");
    const value = {
      source: {
        kind: "catalogue",
        ref: cells.get("ref"),
        ...(cells.has("seller") ? { seller: cells.get("seller") } : {}),
      },
      title: cells.get("title"),
      ...(cells.has("description") ? { description: cells.get("description") } : {}),
      category: cells.get("category"),
      price: { amount, currency: cells.get("currency") },
      location: { country: cells.get("country"), ...(region !== undefined ? { region } : {}) },
      ...(cells.has("url") ? { url: cells.get("url") } : {}),
      attributes,
      publishedAt: cells.get("publishedAt") ?? new Date(now).toISOString(),
    };
    entries.push({ line: record.line, value, rename: renameForCsv });
  }
  return entries;
}
