import { parseArgs } from "node:util";
import {
  type CatalogueFormat,
  catalogueFormatFromPath,
  createHolder,
  readCatalogueFile,
} from "@doorbell/holder";
import { type Io, UsageError } from "../io.js";
import { holderLogger, holderSettings, SHARED_USAGE, sharedOptions } from "./holder-config.js";

export const CATALOGUE_USAGE = `doorbell catalogue import FILE.json|FILE.csv [--format json|csv]
               [--data-dir .doorbell] [--database postgres://…] [--public-url URL] [--smtp smtp://…]

Imports offers into the holder's catalogue (new ones inserted, changed ones updated by ref) and
matches them against the active intents; matched people get their e-mail digest. Every problem
in the file is listed with its line, and nothing is imported until there are none. Give the same
database, public URL and SMTP settings as \`doorbell serve\` (or the same environment).
${SHARED_USAGE}`;

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

  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(await io.readFile(file));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    io.stderr(`doorbell: cannot read ${file}${code ? ` (${code})` : ": it is not UTF-8 text"}\n`);
    return 1;
  }
  // Checked before the database is opened: a file with problems changes nothing.
  const offers = readCatalogueFile(text, { format, now: io.now() });

  const holder = await createHolder({
    dataDir: settings.dataDir,
    ...(settings.database === undefined ? {} : { database: settings.database }),
    publicUrl: settings.publicUrl,
    ...(settings.smtp === undefined ? {} : { smtp: settings.smtp }),
    ...(settings.mailFrom === undefined ? {} : { mailFrom: settings.mailFrom }),
    demo: false,
    env: io.env,
    log: holderLogger(io, "warn"),
    clock: io.now,
  });
  try {
    const result = await holder.services.offers.importCatalogue(offers);
    io.stdout(
      `imported ${file} into ${holder.summary.dialect}: ${holder.summary.database}\n` +
        `  ${offers.length} offers read, ${result.inserted} new, ${result.updated} updated, ` +
        `${offers.length - result.inserted - result.updated} unchanged; ${result.matched} new matches\n`,
    );
    return 0;
  } finally {
    await holder.close();
  }
}

function parse(args: readonly string[]) {
  return parseArgs({ args: [...args], options, allowPositionals: true, strict: true });
}
