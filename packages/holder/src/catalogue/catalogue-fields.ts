/**
 * The field names a catalogue file may use, in both spellings in both formats:
 * the offer's own paths (`source.ref`, `price.amount`, `attributes.make`) and the short CSV names
 * (`ref`, `price`, `make`). CSV headers also ignore case and accept snake_case.
 */

/** The short names, as CSV columns have always been called. */
export type Column =
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

export const COLUMNS: readonly Column[] = [
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
export const REQUIRED: readonly Column[] = ["ref", "title", "category", "price", "currency", "country"];
export const ATTRIBUTES: readonly Column[] = [
  "make",
  "model",
  "year",
  "mileageKm",
  "fuel",
  "kind",
  "rooms",
  "areaM2",
];

/** Each short name's path in the offer's shape. */
export const PATH_OF: Readonly<Record<Column, string>> = {
  ref: "source.ref",
  seller: "source.seller",
  title: "title",
  description: "description",
  category: "category",
  price: "price.amount",
  currency: "price.currency",
  country: "location.country",
  region: "location.region",
  url: "url",
  publishedAt: "publishedAt",
  make: "attributes.make",
  model: "attributes.model",
  year: "attributes.year",
  mileageKm: "attributes.mileageKm",
  fuel: "attributes.fuel",
  kind: "attributes.kind",
  rooms: "attributes.rooms",
  areaM2: "attributes.areaM2",
};

const byName = new Map<string, Column>();
for (const column of COLUMNS) {
  for (const name of [column, column.replace(/([a-z])([A-Z0-9])/g, "$1_$2"), PATH_OF[column]]) {
    byName.set(name.toLowerCase(), column);
  }
}

/** A CSV header cell's column, by either spelling, any case, snake_case too; undefined if none. */
export function columnNamed(name: string): Column | undefined {
  return byName.get(name.trim().toLowerCase());
}

/** Validation paths → the CSV's short names. */
export function renameForCsv(message: string): string {
  return message
    .replace(/^source\.ref\b/, "ref")
    .replace(/^source\.seller\b/, "seller")
    .replace(/^price\.amount\b/, "price")
    .replace(/^price\.currency\b/, "currency")
    .replace(/^location\.country\b/, "country")
    .replace(/^location\.region\b/, "region")
    .replace(/^attributes\./, "");
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * A JSON offer in the offer's shape, whichever spelling it used: short names (`ref`, `currency`,
 * `make`) and dotted keys (`"source.ref"`) are moved to their place. A field given twice (`ref`
 * beside `source.ref`) is a problem; `source.kind` defaults to "catalogue".
 */
export function nestJsonOffer(value: unknown, problems: string[]): unknown {
  if (!isObject(value)) return value;
  // No prototype: a key such as "__proto__" or "constructor" is just a key (and then refused as unknown).
  const offer: Record<string, unknown> = Object.create(null);
  const moved: [string[], unknown, string][] = [];
  for (const [key, field] of Object.entries(value)) {
    const column = key.includes(".")
      ? columnNamed(key)
      : (COLUMNS as readonly string[]).includes(key)
        ? (key as Column)
        : undefined;
    const path = column === undefined ? undefined : PATH_OF[column];
    // `price` as an object and `title`, `url`, … are already in place.
    if (path === undefined || path === key || (key === "price" && isObject(field))) offer[key] = field;
    else moved.push([path.split("."), field, key]);
  }
  for (const [[group, name], field, key] of moved) {
    if (name === undefined) continue;
    const current = offer[group as string];
    if (current !== undefined && !isObject(current)) {
      problems.push(`${key} cannot be given beside ${group} (got ${group} = ${JSON.stringify(current)})`);
      continue;
    }
    const inner: Record<string, unknown> = Object.assign(Object.create(null), current);
    if (name in inner) {
      problems.push(`${group}.${name} is given twice (as ${key} and as ${group}.${name}); give one`);
      continue;
    }
    inner[name] = field;
    offer[group as string] = inner;
  }
  const source = offer.source;
  if (isObject(source) && !("kind" in source)) offer.source = { kind: "catalogue", ...source };
  return offer;
}
