import { type RegionInfo, regionsOf } from "@doorbell/intents";
import type { CatalogueOfferInput } from "../model/services.js";
import type { Country } from "../model/types.js";

/**
 * The built-in demo catalogue for `doorbell serve --demo`: used cars and property in Slovakia and
 * Czechia, a few thousand offers, the same for the same seed and `now` (a seeded PRNG; nothing
 * reads the real clock or Math.random). Prices are in EUR in Slovakia and CZK in Czechia, titles
 * read like the local listing sites, and URLs sit on the reserved domain catalogue.example
 * (RFC 2606), so no link leads anywhere real.
 */

export interface DemoCatalogueOptions {
  /** Default 1. */
  seed?: number;
  /** Default 3,000. */
  count?: number;
  /** Offers are published during the 60 days before this (epoch ms; default 2026-11-30T00:00Z). */
  now?: number;
}

export const DEMO_CATALOGUE_DEFAULT_NOW = Date.UTC(2026, 10, 30);
const CURRENT_YEAR = 2026;
const EUR_TO_CZK = 25;

/** mulberry32: a small, fast 32-bit PRNG; good enough for plausible data, not for secrets. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Random = () => number;
type Fuel = "petrol" | "diesel" | "hybrid" | "electric" | "lpg";

function between(random: Random, min: number, max: number): number {
  return min + (max - min) * random();
}

function integer(random: Random, min: number, max: number): number {
  return Math.floor(between(random, min, max + 1));
}

function pick<T>(random: Random, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

function weighted<T>(random: Random, items: readonly T[], weight: (item: T) => number): T {
  const total = items.reduce((sum, item) => sum + weight(item), 0);
  let r = random() * total;
  for (const item of items) {
    r -= weight(item);
    if (r < 0) return item;
  }
  return items[items.length - 1] as T;
}

/** "142000" → "142 000" (a thin no-break space would be more correct; a plain space is friendlier to search). */
function grouped(n: number): string {
  return String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, " ");
}

/** A listing price: rounded to `step`, often just below a round figure (14 900, 349 900). */
function listingPrice(random: Random, value: number, step: number): number {
  const rounded = Math.max(step, Math.round(value / step) * step);
  if (rounded >= step * 20 && random() < 0.6) return Math.ceil(rounded / (step * 10)) * step * 10 - step;
  return rounded;
}

// ------------------------------------------------------------------------------------------ vehicles

interface Make {
  name: string;
  weight: number;
  petrol: string;
  diesel: string;
  models: readonly (readonly [
    model: string,
    newPriceEur: number,
    fuels: readonly Fuel[],
    from?: number,
    to?: number,
  ])[];
}

const MAKES: readonly Make[] = [
  {
    name: "Škoda",
    weight: 22,
    petrol: "1.5 TSI",
    diesel: "2.0 TDI",
    models: [
      ["Fabia", 17_000, ["petrol"]],
      ["Scala", 22_000, ["petrol"], 2019],
      ["Octavia", 28_000, ["diesel", "petrol", "diesel", "hybrid", "lpg"]],
      ["Superb", 38_000, ["diesel", "petrol", "hybrid"]],
      ["Kamiq", 24_000, ["petrol"], 2019],
      ["Karoq", 30_000, ["diesel", "petrol"], 2017],
      ["Kodiaq", 38_000, ["diesel", "petrol"], 2016],
      ["Enyaq", 45_000, ["electric"], 2021],
      ["Rapid", 18_000, ["petrol", "diesel"], 2012, 2019],
    ],
  },
  {
    name: "Volkswagen",
    weight: 14,
    petrol: "1.5 TSI",
    diesel: "2.0 TDI",
    models: [
      ["Polo", 19_000, ["petrol"]],
      ["Golf", 27_000, ["petrol", "diesel", "hybrid"]],
      ["Passat", 36_000, ["diesel"]],
      ["Tiguan", 36_000, ["diesel", "petrol"]],
      ["Touran", 32_000, ["diesel"]],
      ["T-Roc", 28_000, ["petrol"], 2017],
      ["ID.3", 40_000, ["electric"], 2020],
      ["Transporter", 42_000, ["diesel"]],
    ],
  },
  {
    name: "Hyundai",
    weight: 8,
    petrol: "1.0 T-GDi",
    diesel: "1.6 CRDi",
    models: [
      ["i20", 17_000, ["petrol"]],
      ["i30", 22_000, ["petrol", "diesel"]],
      ["Tucson", 31_000, ["petrol", "hybrid", "diesel"], 2015],
      ["Kona", 25_000, ["petrol", "electric", "hybrid"], 2017],
    ],
  },
  {
    name: "Kia",
    weight: 7,
    petrol: "1.5 T-GDi",
    diesel: "1.6 CRDi",
    models: [
      ["Ceed", 22_000, ["petrol", "diesel"]],
      ["Sportage", 31_000, ["petrol", "hybrid", "diesel"], 2010],
      ["Rio", 16_000, ["petrol"]],
      ["Niro", 30_000, ["hybrid", "electric"], 2016],
      ["XCeed", 25_000, ["petrol"], 2019],
    ],
  },
  {
    name: "Toyota",
    weight: 6,
    petrol: "1.5 VVT-i",
    diesel: "2.0 D-4D",
    models: [
      ["Yaris", 18_000, ["hybrid", "petrol"]],
      ["Corolla", 26_000, ["hybrid", "petrol"]],
      ["RAV4", 38_000, ["hybrid"]],
      ["C-HR", 30_000, ["hybrid"], 2016],
    ],
  },
  {
    name: "Dacia",
    weight: 5,
    petrol: "1.0 TCe",
    diesel: "1.5 Blue dCi",
    models: [
      ["Sandero", 12_000, ["petrol", "lpg"]],
      ["Duster", 18_000, ["petrol", "diesel", "lpg"], 2010],
      ["Logan", 11_000, ["petrol", "lpg"]],
      ["Jogger", 17_000, ["petrol", "lpg", "hybrid"], 2022],
    ],
  },
  {
    name: "Ford",
    weight: 6,
    petrol: "1.0 EcoBoost",
    diesel: "2.0 EcoBlue",
    models: [
      ["Fiesta", 16_000, ["petrol"], 2008, 2023],
      ["Focus", 23_000, ["petrol", "diesel"]],
      ["Kuga", 32_000, ["petrol", "diesel", "hybrid"]],
      ["Mondeo", 30_000, ["diesel"], 2008, 2022],
      ["Transit Custom", 38_000, ["diesel"]],
    ],
  },
  {
    name: "Peugeot",
    weight: 4,
    petrol: "1.2 PureTech",
    diesel: "1.5 BlueHDi",
    models: [
      ["208", 18_000, ["petrol", "electric"]],
      ["308", 25_000, ["petrol", "diesel"]],
      ["2008", 23_000, ["petrol"], 2013],
      ["3008", 32_000, ["diesel", "petrol", "hybrid"]],
    ],
  },
  {
    name: "Renault",
    weight: 4,
    petrol: "1.3 TCe",
    diesel: "1.5 dCi",
    models: [
      ["Clio", 17_000, ["petrol", "lpg"]],
      ["Mégane", 24_000, ["petrol", "diesel"]],
      ["Captur", 22_000, ["petrol", "hybrid"], 2013],
      ["Kadjar", 27_000, ["diesel", "petrol"], 2015, 2022],
    ],
  },
  {
    name: "Opel",
    weight: 4,
    petrol: "1.2 Turbo",
    diesel: "1.5 CDTI",
    models: [
      ["Corsa", 17_000, ["petrol"]],
      ["Astra", 23_000, ["petrol", "diesel"]],
      ["Insignia", 31_000, ["diesel"], 2009, 2022],
      ["Mokka", 24_000, ["petrol"], 2012],
    ],
  },
  {
    name: "BMW",
    weight: 5,
    petrol: "20i",
    diesel: "20d",
    models: [
      ["Series 1", 32_000, ["petrol", "diesel"]],
      ["Series 3", 45_000, ["diesel", "petrol", "hybrid"]],
      ["Series 5", 58_000, ["diesel", "petrol"]],
      ["X3", 55_000, ["diesel"]],
      ["X5", 78_000, ["diesel", "hybrid"]],
    ],
  },
  {
    name: "Audi",
    weight: 5,
    petrol: "35 TFSI",
    diesel: "40 TDI",
    models: [
      ["A3", 32_000, ["petrol", "diesel"]],
      ["A4", 42_000, ["diesel", "petrol"]],
      ["A6", 55_000, ["diesel"]],
      ["Q3", 40_000, ["petrol", "diesel"], 2011],
      ["Q5", 55_000, ["diesel", "petrol"]],
    ],
  },
  {
    name: "Mercedes-Benz",
    weight: 4,
    petrol: "200",
    diesel: "220 d",
    models: [
      ["A-Class", 32_000, ["petrol"]],
      ["C-Class", 45_000, ["diesel", "petrol", "hybrid"]],
      ["E-Class", 58_000, ["diesel"]],
      ["GLC", 58_000, ["diesel", "hybrid"], 2015],
    ],
  },
  {
    name: "Suzuki",
    weight: 3,
    petrol: "1.4 BoosterJet",
    diesel: "1.6 DDiS",
    models: [
      ["Vitara", 24_000, ["petrol", "hybrid"]],
      ["Swift", 16_000, ["petrol", "hybrid"]],
      ["S-Cross", 26_000, ["hybrid", "petrol"], 2013],
      ["Ignis", 14_000, ["petrol"], 2016],
    ],
  },
  {
    name: "Citroën",
    weight: 3,
    petrol: "1.2 PureTech",
    diesel: "1.5 BlueHDi",
    models: [
      ["C3", 16_000, ["petrol"]],
      ["C4", 23_000, ["petrol", "diesel", "electric"]],
      ["Berlingo", 24_000, ["diesel", "petrol"]],
    ],
  },
  {
    name: "Seat",
    weight: 3,
    petrol: "1.5 TSI",
    diesel: "2.0 TDI",
    models: [
      ["Leon", 25_000, ["petrol", "diesel"]],
      ["Ibiza", 17_000, ["petrol"]],
      ["Ateca", 29_000, ["petrol", "diesel"], 2016],
    ],
  },
  {
    name: "Mazda",
    weight: 2,
    petrol: "2.0 Skyactiv-G",
    diesel: "2.2 Skyactiv-D",
    models: [
      ["CX-5", 33_000, ["petrol", "diesel"]],
      ["3", 25_000, ["petrol"]],
      ["6", 32_000, ["petrol", "diesel"]],
    ],
  },
  {
    name: "Volvo",
    weight: 2,
    petrol: "T5",
    diesel: "D4",
    models: [
      ["XC60", 55_000, ["diesel", "hybrid"]],
      ["V60", 45_000, ["diesel", "petrol"]],
    ],
  },
  {
    name: "Tesla",
    weight: 1,
    petrol: "",
    diesel: "",
    models: [
      ["Model 3", 45_000, ["electric"], 2019],
      ["Model Y", 48_000, ["electric"], 2021],
    ],
  },
];

const VEHICLE_NOTES: Record<Country, readonly string[]> = {
  SK: [
    "Pravidelný servis, servisná knižka.",
    "Nehavarované, prvý majiteľ, kúpené na Slovensku.",
    "Zimné pneumatiky v cene.",
    "Možnosť financovania a protiúčtu.",
    "STK a EK platné, pripravené na prepis.",
    "Garážované, nefajčiarske vozidlo.",
  ],
  CZ: [
    "Pravidelný servis, servisní knížka.",
    "Nehavarováno, první majitel, koupeno v ČR.",
    "Zimní pneumatiky v ceně.",
    "Možnost financování a protiúčtu.",
    "STK platná, připraveno k přepisu.",
    "Garážované, nekuřácké vozidlo.",
  ],
};

const DEALERS: Record<Country, readonly string[]> = {
  SK: ["AutoCentrum {town}", "Autobazár {town}", "Auto Kredit {town} s.r.o.", "súkromný predajca"],
  CZ: ["AutoCentrum {town}", "Autobazar {town}", "Auto Plus {town} s.r.o.", "soukromý prodejce"],
};

function engineLabel(make: Make, model: string, fuel: Fuel): string {
  const series = /^Series (\d)$/.exec(model)?.[1];
  if (make.name === "BMW" && (fuel === "petrol" || fuel === "diesel")) {
    return series ? `${series}${make[fuel]}` : `xDrive${make[fuel]}`;
  }
  if (make.name === "Mercedes-Benz" && (fuel === "petrol" || fuel === "diesel") && /-Class$/.test(model)) {
    return `${model[0]} ${make[fuel]}`;
  }
  switch (fuel) {
    case "petrol":
      return make.petrol;
    case "diesel":
      return make.diesel;
    case "lpg":
      return `${make.petrol} LPG`;
    case "hybrid":
      return "Hybrid";
    case "electric":
      return make.name === "Tesla" ? "Long Range" : "Electric";
  }
}

function vehicle(random: Random, index: number, country: Country, region: RegionInfo, publishedAt: string) {
  const make = weighted(random, MAKES, (m) => m.weight);
  const [model, newPrice, fuels, from = 2008, to = CURRENT_YEAR] = pick(random, make.models);
  const fuel = pick(random, fuels);
  // Ages cluster around 5–10 years, as on Slovak and Czech used-car sites; electric cars are young;
  // a model is only offered from the years it was made.
  const maxAge = Math.min(fuel === "electric" ? 6 : 18, CURRENT_YEAR - from);
  const minAge = CURRENT_YEAR - to;
  const spread = Math.floor(Math.abs(between(random, -1, 1) + between(random, -1, 1)) * 9);
  const age = Math.max(minAge, Math.min(maxAge, spread));
  const year = CURRENT_YEAR - age;
  const mileageKm =
    age === 0 ? integer(random, 1, 30) * 100 : Math.round((age * between(random, 9_000, 24_000)) / 100) * 100;
  const value = Math.max(
    1_500,
    newPrice * 0.86 ** age * (1 - Math.min(0.35, mileageKm / 900_000)) * between(random, 0.88, 1.12),
  );
  const price =
    country === "SK"
      ? { amount: listingPrice(random, value, 100), currency: "EUR" as const }
      : { amount: listingPrice(random, value * EUR_TO_CZK, 1_000), currency: "CZK" as const };
  const town = pick(random, region.towns);
  const transmission =
    random() < (fuel === "electric" || fuel === "hybrid" ? 1 : 0.35) ? "automatic" : "manual";
  const engine = engineLabel(make, model, fuel);
  const ref = `demo-V${String(index).padStart(6, "0")}`;
  const seller = pick(random, DEALERS[country]).replace("{town}", town);
  const notes = [pick(random, VEHICLE_NOTES[country]), pick(random, VEHICLE_NOTES[country])];
  const description = [...new Set(notes)].join(" ");
  const offer: CatalogueOfferInput = {
    source: { kind: "catalogue", ref, seller },
    title: `${make.name} ${model}${engine ? ` ${engine}` : ""}, ${year}, ${grouped(mileageKm)} km`,
    description: `${description} ${town}.`,
    category: "vehicles",
    price,
    location: { country, region: region.code },
    url: `https://catalogue.example/vehicles/${ref}`,
    attributes: { make: make.name, model, year, mileageKm, fuel, transmission },
    publishedAt,
  };
  return offer;
}

// ------------------------------------------------------------------------------------------ property

/** Price per m² of a flat in the region's seat: EUR in Slovakia, CZK in Czechia. */
const FLAT_PRICE_PER_M2: Record<string, number> = {
  "SK-BL": 3_700,
  "SK-TA": 2_300,
  "SK-TC": 1_900,
  "SK-NI": 1_900,
  "SK-ZI": 2_200,
  "SK-BC": 1_800,
  "SK-PV": 1_900,
  "SK-KI": 2_400,
  "CZ-10": 135_000,
  "CZ-20": 78_000,
  "CZ-31": 68_000,
  "CZ-32": 72_000,
  "CZ-41": 45_000,
  "CZ-42": 36_000,
  "CZ-51": 62_000,
  "CZ-52": 64_000,
  "CZ-53": 62_000,
  "CZ-63": 56_000,
  "CZ-64": 105_000,
  "CZ-71": 64_000,
  "CZ-72": 60_000,
  "CZ-80": 46_000,
};

const PROPERTY_NOTES: Record<Country, readonly string[]> = {
  SK: [
    "Po kompletnej rekonštrukcii.",
    "Balkón, pivnica, výťah.",
    "Tichá lokalita, dobrá občianska vybavenosť.",
    "Vlastné parkovanie.",
    "Pôvodný stav, vhodné na rekonštrukciu.",
    "Nízke mesačné náklady.",
  ],
  CZ: [
    "Po kompletní rekonstrukci.",
    "Balkon, sklep, výtah.",
    "Klidná lokalita, dobrá občanská vybavenost.",
    "Vlastní parkování.",
    "Původní stav, vhodné k rekonstrukci.",
    "Nízké měsíční náklady.",
  ],
};

const AGENCIES: Record<Country, readonly string[]> = {
  SK: ["Reality {town}", "RK Domov {town}", "súkromný predajca"],
  CZ: ["Reality {town}", "RK Domov {town}", "soukromý prodejce"],
};

function property(random: Random, index: number, country: Country, region: RegionInfo, publishedAt: string) {
  const kind = weighted(
    random,
    ["flat", "house", "land"] as const,
    (k) => ({ flat: 55, house: 30, land: 15 })[k],
  );
  const townIndex = Math.floor(random() * region.towns.length);
  const town = region.towns[townIndex] as string;
  const townFactor = townIndex === 0 ? 1 : 0.78;
  const perM2 = (FLAT_PRICE_PER_M2[region.code] ?? (country === "SK" ? 2_000 : 60_000)) * townFactor;
  const ref = `demo-P${String(index).padStart(6, "0")}`;
  const attributes: Record<string, string | number> = { kind };
  let title: string;
  let value: number;
  if (kind === "flat") {
    const rooms = weighted(random, [1, 2, 3, 4, 5], (r) => [10, 30, 35, 20, 5][r - 1] as number);
    const area = Math.max(18, Math.round(16 + rooms * 19 + between(random, -8, 16)));
    value = area * perM2 * between(random, 0.85, 1.15);
    attributes.rooms = rooms;
    attributes.areaM2 = area;
    title =
      country === "SK"
        ? `Predaj ${rooms}-izbový byt, ${area} m², ${town}`
        : `Prodej bytu ${rooms}+${random() < 0.5 ? "kk" : "1"}, ${area} m², ${town}`;
  } else if (kind === "house") {
    const rooms = integer(random, 3, 7);
    const area = Math.round(70 + rooms * 22 + between(random, -10, 40));
    const plot = Math.round(between(random, 300, 1_500) / 10) * 10;
    value = area * perM2 * 0.8 * between(random, 0.8, 1.2) + plot * perM2 * 0.04;
    attributes.rooms = rooms;
    attributes.areaM2 = area;
    attributes.plotM2 = plot;
    title =
      country === "SK"
        ? `Predaj rodinný dom, ${rooms} izieb, ${area} m², pozemok ${grouped(plot)} m², ${town}`
        : `Prodej rodinného domu ${rooms}+1, ${area} m², pozemek ${grouped(plot)} m², ${town}`;
  } else {
    const area = Math.round(between(random, 400, 3_000) / 10) * 10;
    value = area * perM2 * 0.06 * between(random, 0.6, 1.4);
    attributes.areaM2 = area;
    title =
      country === "SK"
        ? `Predaj pozemok pre rodinný dom, ${grouped(area)} m², ${town}`
        : `Prodej stavebního pozemku, ${grouped(area)} m², ${town}`;
  }
  const price =
    country === "SK"
      ? { amount: listingPrice(random, value, 1_000), currency: "EUR" as const }
      : { amount: listingPrice(random, value, 10_000), currency: "CZK" as const };
  const notes = [pick(random, PROPERTY_NOTES[country]), pick(random, PROPERTY_NOTES[country])];
  const offer: CatalogueOfferInput = {
    source: { kind: "catalogue", ref, seller: pick(random, AGENCIES[country]).replace("{town}", town) },
    title,
    description: [...new Set(kind === "land" ? [notes[0] as string] : notes)].join(" "),
    category: "property",
    price,
    location: { country, region: region.code },
    url: `https://catalogue.example/property/${ref}`,
    attributes,
    publishedAt,
  };
  return offer;
}

// ---------------------------------------------------------------------------------------------------

/** A deterministic demo catalogue: about 60 % vehicles, 40 % property; 55 % Slovakia, 45 % Czechia. */
export function demoCatalogue(options: DemoCatalogueOptions = {}): CatalogueOfferInput[] {
  const random = seededRandom(options.seed ?? 1);
  const count = options.count ?? 3_000;
  const now = options.now ?? DEMO_CATALOGUE_DEFAULT_NOW;
  const regions: Record<Country, RegionInfo[]> = { SK: regionsOf("SK"), CZ: regionsOf("CZ") };
  const offers: CatalogueOfferInput[] = [];
  for (let i = 1; i <= count; i++) {
    const country: Country = random() < 0.55 ? "SK" : "CZ";
    const region = weighted(random, regions[country], (r) => r.weight);
    const minutesAgo = Math.floor(random() * 60 * 24 * 60);
    const publishedAt = new Date(Math.floor(now / 60_000) * 60_000 - minutesAgo * 60_000).toISOString();
    offers.push(
      random() < 0.6
        ? vehicle(random, i, country, region, publishedAt)
        : property(random, i, country, region, publishedAt),
    );
  }
  return offers;
}
