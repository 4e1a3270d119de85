/**
 * The soak's fourth process (scripts/soak.ts): a holder on the same database and seal keys as the
 * serve processes that imports catalogue offers at a steady rate, as a feed connector would, and
 * does nothing else. Every second it imports the next `rate` offers (new refs each time, one
 * in ten within the soak intents' budget, the models in turn), so the serve processes have
 * matches to ring and pull. Prints one JSON line per second and a summary on SIGTERM.
 *
 *   node --import tsx --conditions=@doorbell/source scripts/soak-importer.ts \
 *     --database URL --public-url URL --smtp URL --data-dir DIR --rate 20
 */
import { parseArgs } from "node:util";
import { type CatalogueOfferInput, createHolder } from "@doorbell/holder";
import { pino } from "pino";
import { SOAK_MODELS } from "./soak-models.js";

const { values } = parseArgs({
  options: {
    database: { type: "string" },
    "public-url": { type: "string" },
    smtp: { type: "string" },
    "data-dir": { type: "string" },
    rate: { type: "string", default: "20" },
  },
});
const rate = Number(values.rate);
if (!values.database || !values["data-dir"] || !Number.isInteger(rate) || rate < 1) {
  process.stderr.write("say --database URL --data-dir DIR and a whole --rate\n");
  process.exit(2);
}

let stopping = false;
// Registered before the holder opens: a stop during start-up still closes it and says so.
process.on("SIGTERM", () => {
  stopping = true;
});
process.on("SIGINT", () => {
  stopping = true;
});

const holder = await createHolder({
  dataDir: values["data-dir"],
  database: values.database,
  publicUrl: values["public-url"] ?? "http://127.0.0.1:8080",
  ...(values.smtp === undefined ? {} : { smtp: values.smtp }),
  demo: false,
  // As `doorbell catalogue import`: the serve processes deliver the doorbells (issue 14).
  background: false,
  env: process.env,
  log: pino({ level: "warn" }),
});

let next = 0;
let imported = 0;
let errors = 0;

function offer(n: number): CatalogueOfferInput {
  const model = SOAK_MODELS[n % SOAK_MODELS.length] as string;
  return {
    source: { kind: "catalogue", ref: `SOAK-${process.pid}-${n}`, seller: "Soak Motors" },
    title: `Škoda ${model} ${n}`,
    category: "vehicles",
    // One offer in ten within the intents' budget of 15,000 EUR (each model's in turn).
    price: { amount: Math.floor(n / SOAK_MODELS.length) % 10 === 0 ? 12_000 : 19_000, currency: "EUR" },
    location: { country: "SK", region: "SK-BL" },
    url: `https://cars.example.sk/soak/${n}`,
    attributes: { make: "Škoda", model, year: 2019, mileageKm: 90_000, fuel: "diesel" },
  } as CatalogueOfferInput;
}

const started = Date.now();
while (!stopping) {
  const due = started + (next / rate) * 1000;
  const wait = due - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  if (stopping) break;
  const batch = Array.from({ length: rate }, (_, i) => offer(next + i));
  next += rate;
  try {
    const result = await holder.services.offers.importCatalogue(batch);
    imported += result.inserted;
  } catch (error) {
    errors++;
    process.stderr.write(`import failed: ${(error as Error).name} ${(error as Error).message}\n`);
  }
  process.stdout.write(`${JSON.stringify({ imported, errors })}\n`);
}

await holder.close();
process.stdout.write(`${JSON.stringify({ done: true, imported, errors })}\n`);
