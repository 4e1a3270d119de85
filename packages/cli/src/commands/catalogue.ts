import { parseArgs } from "node:util";
import {
  type CatalogueFormat,
  catalogueFormatFromPath,
  checkCatalogueFile,
  createHolder,
  streamCatalogueFile,
} from "@doorbell/holder";
import { type Io, processIo, UsageError } from "../io.js";
import { holderLogger, holderSettings, SHARED_USAGE, sharedOptions } from "./holder-config.js";
import { boundImportHeap } from "./import-heap.js";

export const CATALOGUE_USAGE = `doorbell catalogue import FILE.json|FILE.csv [--format json|csv]
               [--data-dir .doorbell] [--database postgres://…] [--public-url URL] [--smtp smtp://…]

Imports offers into the holder's catalogue (new ones inserted, changed ones updated by ref) and
matches them against the active intents; matched people get their e-mail digest. Every problem
in the file is listed with its line, and nothing is imported until there are none. Give the same
database, public URL and SMTP settings as \`doorbell serve\` (or the same environment).
  --format F            json or csv (default: from the file's extension)
${SHARED_USAGE}

The file (UTF-8; examples/catalogue/offers.json and offers.csv are complete examples):
  JSON   an array of offers:
         [{ "source": { "ref": "A-1001", "seller": "Autobazár Zvolen" },
            "title": "Škoda Octavia Combi 2.0 TDI", "category": "vehicles",
            "price": { "amount": 14900, "currency": "EUR" },
            "location": { "country": "SK", "region": "SK-BC" },
            "url": "https://catalogue.example/vehicles/A-1001",
            "attributes": { "make": "Škoda", "model": "Octavia", "year": 2018,
                            "mileageKm": 142000, "fuel": "diesel" },
            "publishedAt": "2026-11-20T08:00:00Z" }]
  CSV    a header row naming the columns in any order (names ignore case; snake_case works),
         then one offer per record; comma- or semicolon-separated, RFC 4180 quoting:
         ref,title,category,price,currency,country,region,url,make,model,year,mileageKm,fuel

  field (CSV column)          required  meaning
  source.ref (ref)            yes       the catalogue's own id of the listing, unique in the file
  title                       yes
  category                    yes       vehicles | property
  price.amount (price)        yes       whole currency units (12500)
  price.currency (currency)   yes       EUR | CZK
  location.country (country)  yes       SK | CZ
  location.region (region)              ISO 3166-2 code of the country (SK-BL, CZ-10, …)
  description
  url                                   absolute http(s) URL of the listing
  publishedAt                           ISO 8601 with a zone (default: the time of the import)
  source.seller (seller)
  attributes.make, model, year, mileageKm, fuel     vehicles (fuel: petrol|diesel|hybrid|electric|lpg)
  attributes.kind, rooms, areaM2                    property (kind: flat|house|land)
An empty CSV cell means the field is not given.`;

const options = {
  ...sharedOptions,
  format: { type: "string" },
} as const;

export async function catalogueCommand(args: readonly string[], io: Io): Promise<number> {
  const [action, ...rest] = args;
  if (action !== "import") {
    throw new UsageError(action ? `unknown catalogue action ${JSON.stringify(action)}` : "say import FILE");
  }
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(rest);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  const [file, ...extra] = positionals;
  if (file === undefined)
    throw new UsageError("say which file to import: doorbell catalogue import offers.json");
  if (extra.length > 0) throw new UsageError("import one file at a time");
  const format = (values.format ?? catalogueFormatFromPath(file)) as CatalogueFormat | undefined;
  if (format !== "json" && format !== "csv") {
    throw new UsageError("the file must end in .json or .csv, or give --format json|csv");
  }
  const settings = holderSettings(values, io, "http://127.0.0.1:8080");
  // A process of its own (not a test calling in): its heap follows the import's bounded live set.
  if (io === processIo) boundImportHeap();

  // Checked whole before the database is opened: a file with problems changes nothing. The file
  // is streamed (twice: checked, then imported), so memory stays bounded whatever its size.
  let offers: number;
  try {
    offers = (await checkCatalogueFile(file, { format })).offers;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (typeof code !== "string" || code.startsWith("ERR_HOLDER")) throw error;
    io.stderr(`doorbell: cannot read ${file} (${code})\n`);
    return 1;
  }

  const holder = await createHolder({
    dataDir: settings.dataDir,
    ...(settings.database === undefined ? {} : { database: settings.database }),
    publicUrl: settings.publicUrl,
    ...(settings.smtp === undefined ? {} : { smtp: settings.smtp }),
    ...(settings.mailFrom === undefined ? {} : { mailFrom: settings.mailFrom }),
    demo: false,
    // The serve processes deliver the doorbells this import queues, under their egress policy,
    // and serve the Events subscribers this import's matches wake (told through the change bus).
    background: false,
    events: false,
    ...(settings.digestWindowMs === undefined ? {} : { config: { digestWindowMs: settings.digestWindowMs } }),
    env: io.env,
    log: holderLogger(io, "warn"),
    clock: io.now,
  });
  try {
    const result = await holder.services.offers.importCatalogue(streamCatalogueFile(file, { format }));
    io.stdout(
      `imported ${file} into ${holder.summary.dialect}: ${holder.summary.database}\n` +
        `  ${offers} offers read, ${result.inserted} new, ${result.updated} updated, ` +
        `${offers - result.inserted - result.updated} unchanged; ${result.matched} new matches\n`,
    );
    return 0;
  } finally {
    await holder.close();
  }
}

function parse(args: readonly string[]) {
  return parseArgs({ args: [...args], options, allowPositionals: true, strict: true });
}
