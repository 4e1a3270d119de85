/**
 * CSV catalogue records through csv-parse (RFC 4180; comma- or semicolon-separated, the latter
 * when the header has semicolons and no commas), streamed: one record at a time, each with the
 * line it starts on. A bad record is reported and skipped, so every problem is listed at once.
 */
import { Readable } from "node:stream";
import { type CsvError, type Info, parse } from "csv-parse";
import type { Entry, Problems } from "./catalogue-entries.js";
import { ATTRIBUTES, COLUMNS, type Column, columnNamed, REQUIRED, renameForCsv } from "./catalogue-fields.js";

const INTEGER_ATTRIBUTES = new Set<Column>(["year", "mileageKm", "rooms"]);

const newlinesIn = (fields: readonly string[]): number => {
  let count = 0;
  for (const field of fields)
    for (let i = field.indexOf("\n"); i >= 0; i = field.indexOf("\n", i + 1)) count++;
  return count;
};

/** The first chunks up to the header's line break, to choose the separator before parsing. */
async function withHead(text: AsyncIterable<string>): Promise<{ head: string; rest: AsyncIterator<string> }> {
  const rest = text[Symbol.asyncIterator]();
  let head = "";
  while (!head.includes("\n") && head.length < 1_000_000) {
    const next = await rest.next();
    if (next.done) break;
    head += next.value;
  }
  return { head, rest };
}

async function* replay(head: string, rest: AsyncIterator<string>): AsyncGenerator<string> {
  if (head !== "") yield head;
  for (;;) {
    const next = await rest.next();
    if (next.done) return;
    yield next.value;
  }
}

export async function* csvEntries(text: AsyncIterable<string>, problems: Problems): AsyncGenerator<Entry> {
  const { head, rest } = await withHead(text);
  const firstLine = head.slice(0, head.includes("\n") ? head.indexOf("\n") : head.length);
  const delimiter = firstLine.includes(";") && !firstLine.includes(",") ? ";" : ",";
  const parser = parse({
    delimiter,
    info: true,
    relax_column_count: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
    // Called as each record is parsed, before any reaches the loop below: where the next one starts.
    on_record: (record: string[], context: { lines: number }) => {
      lastEnd = context.lines;
      return record;
    },
  });
  // The line the last record read or skipped ended on.
  let lastEnd = 0;
  parser.on("skip", (error: CsvError & { lines?: number }) => {
    const line = error.lines ?? lastEnd + 1;
    if (error.code === "CSV_QUOTE_NOT_CLOSED") {
      problems.add(lastEnd + 1, 'a quoted field is not closed: a " is missing');
    } else if (error.code === "INVALID_OPENING_QUOTE" || error.code === "CSV_INVALID_CLOSING_QUOTE") {
      problems.add(
        line,
        'a " inside an unquoted field: quote the whole field and double the inner quote ("")',
      );
    } else {
      problems.add(line, `this row cannot be read as CSV: ${error.message}`);
    }
    lastEnd = line;
  });
  const source = Readable.from(replay(head, rest));
  source.on("error", (error) => parser.destroy(error));
  source.pipe(parser);

  let columns: (Column | undefined)[] | undefined;
  for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: Info }>) {
    const line = info.lines - newlinesIn(record);
    if (record.length === 1 && (record[0] as string).trim() === "") continue;
    if (columns === undefined) {
      columns = header(record, line, problems);
      if (columns === undefined) {
        source.destroy();
        return;
      }
      continue;
    }
    const entry = csvEntry(record, line, columns, problems);
    if (entry !== undefined) yield entry;
  }
  if (columns === undefined) {
    problems.add(1, `the CSV file is empty: it needs a header row (${REQUIRED.join(",")}, ...)`);
  }
}

function header(
  fields: readonly string[],
  line: number,
  problems: Problems,
): (Column | undefined)[] | undefined {
  const columns: (Column | undefined)[] = [];
  let ok = true;
  fields.forEach((raw, index) => {
    const name = raw.trim();
    const column = columnNamed(name);
    if (column === undefined) {
      problems.add(
        line,
        `column ${index + 1} "${name}" is not a catalogue column (known: ${COLUMNS.join(", ")})`,
      );
      ok = false;
    } else if (columns.includes(column)) {
      problems.add(line, `column "${column}" appears twice in the header`);
      ok = false;
    }
    columns.push(column);
  });
  for (const required of REQUIRED) {
    if (!columns.includes(required)) {
      problems.add(line, `the header has no "${required}" column (required: ${REQUIRED.join(", ")})`);
      ok = false;
    }
  }
  return ok ? columns : undefined;
}

/** One record in the offer's shape, or undefined after reporting why it is not one. */
function csvEntry(
  fields: readonly string[],
  line: number,
  columns: readonly (Column | undefined)[],
  problems: Problems,
): Entry | undefined {
  if (fields.length !== columns.length) {
    problems.add(
      line,
      `this row has ${fields.length} fields but the header has ${columns.length} (a separator inside an unquoted field?)`,
    );
    return undefined;
  }
  const cells = new Map<Column, string>();
  fields.forEach((value, index) => {
    const trimmed = value.trim();
    if (trimmed !== "") cells.set(columns[index] as Column, trimmed);
  });
  let bad = false;
  const attributes: Record<string, string | number> = {};
  for (const [column, value] of cells) {
    if (!ATTRIBUTES.includes(column)) continue;
    if (!INTEGER_ATTRIBUTES.has(column) && column !== "areaM2") {
      attributes[column] = value;
      continue;
    }
    const ok = column === "areaM2" ? /^\d+(\.\d+)?$/.test(value) : /^\d+$/.test(value);
    if (ok) attributes[column] = Number(value);
    else {
      bad = true;
      problems.add(
        line,
        `${column} must be ${column === "areaM2" ? "a number such as 72.5" : "a whole number of digits"} (got ${JSON.stringify(value)})`,
      );
    }
  }
  const price = cells.get("price");
  if (price !== undefined && !/^\d+$/.test(price)) {
    bad = true;
    problems.add(line, `price must be a whole number of digits such as 12500 (got ${JSON.stringify(price)})`);
  }
  if (bad) return undefined;
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
    price: { amount: price === undefined ? undefined : Number(price), currency: cells.get("currency") },
    location: { country: cells.get("country"), ...(region !== undefined ? { region } : {}) },
    ...(cells.has("url") ? { url: cells.get("url") } : {}),
    attributes,
    // Left out when not given: the holder keeps the time it first saw the offer.
    ...(cells.has("publishedAt") ? { publishedAt: cells.get("publishedAt") } : {}),
  };
  return { line, value, rename: renameForCsv };
}
