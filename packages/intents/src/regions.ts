import type { Country, Currency } from "./types.js";

/**
 * The regions the binding knows: the ISO 3166-2 codes of Slovakia's kraje and Czechia's kraje
 * (Prague included as CZ-10), with their names and a few towns. The names are indexed for full-text
 * search beside each offer (migration 2), so "Praha" or "Košice" finds offers whose text does not
 * name the region.
 */
export interface RegionInfo {
  code: string;
  country: Country;
  name: string;
  /** Towns, the biggest first; the first is the region's seat. */
  towns: readonly string[];
  /** Relative weight for the demo catalogue (roughly population, in tens of thousands). */
  weight: number;
}

export const REGIONS: readonly RegionInfo[] = [
  {
    code: "SK-BL",
    country: "SK",
    name: "Bratislavský kraj",
    towns: ["Bratislava", "Pezinok", "Senec", "Malacky"],
    weight: 73,
  },
  {
    code: "SK-TA",
    country: "SK",
    name: "Trnavský kraj",
    towns: ["Trnava", "Piešťany", "Galanta", "Dunajská Streda"],
    weight: 56,
  },
  {
    code: "SK-TC",
    country: "SK",
    name: "Trenčiansky kraj",
    towns: ["Trenčín", "Prievidza", "Považská Bystrica"],
    weight: 57,
  },
  {
    code: "SK-NI",
    country: "SK",
    name: "Nitriansky kraj",
    towns: ["Nitra", "Nové Zámky", "Komárno", "Levice"],
    weight: 66,
  },
  {
    code: "SK-ZI",
    country: "SK",
    name: "Žilinský kraj",
    towns: ["Žilina", "Martin", "Ružomberok", "Liptovský Mikuláš"],
    weight: 68,
  },
  {
    code: "SK-BC",
    country: "SK",
    name: "Banskobystrický kraj",
    towns: ["Banská Bystrica", "Zvolen", "Lučenec", "Brezno"],
    weight: 62,
  },
  {
    code: "SK-PV",
    country: "SK",
    name: "Prešovský kraj",
    towns: ["Prešov", "Poprad", "Humenné", "Bardejov"],
    weight: 81,
  },
  {
    code: "SK-KI",
    country: "SK",
    name: "Košický kraj",
    towns: ["Košice", "Michalovce", "Spišská Nová Ves", "Rožňava"],
    weight: 78,
  },
  { code: "CZ-10", country: "CZ", name: "Hlavní město Praha", towns: ["Praha"], weight: 135 },
  {
    code: "CZ-20",
    country: "CZ",
    name: "Středočeský kraj",
    towns: ["Kladno", "Mladá Boleslav", "Kolín", "Příbram", "Beroun"],
    weight: 144,
  },
  {
    code: "CZ-31",
    country: "CZ",
    name: "Jihočeský kraj",
    towns: ["České Budějovice", "Tábor", "Písek", "Strakonice"],
    weight: 65,
  },
  {
    code: "CZ-32",
    country: "CZ",
    name: "Plzeňský kraj",
    towns: ["Plzeň", "Klatovy", "Rokycany"],
    weight: 60,
  },
  {
    code: "CZ-41",
    country: "CZ",
    name: "Karlovarský kraj",
    towns: ["Karlovy Vary", "Cheb", "Sokolov"],
    weight: 29,
  },
  {
    code: "CZ-42",
    country: "CZ",
    name: "Ústecký kraj",
    towns: ["Ústí nad Labem", "Teplice", "Děčín", "Most", "Chomutov"],
    weight: 80,
  },
  {
    code: "CZ-51",
    country: "CZ",
    name: "Liberecký kraj",
    towns: ["Liberec", "Jablonec nad Nisou", "Česká Lípa"],
    weight: 45,
  },
  {
    code: "CZ-52",
    country: "CZ",
    name: "Královéhradecký kraj",
    towns: ["Hradec Králové", "Trutnov", "Náchod"],
    weight: 55,
  },
  {
    code: "CZ-53",
    country: "CZ",
    name: "Pardubický kraj",
    towns: ["Pardubice", "Chrudim", "Svitavy"],
    weight: 52,
  },
  {
    code: "CZ-63",
    country: "CZ",
    name: "Kraj Vysočina",
    towns: ["Jihlava", "Třebíč", "Žďár nad Sázavou", "Havlíčkův Brod"],
    weight: 51,
  },
  {
    code: "CZ-64",
    country: "CZ",
    name: "Jihomoravský kraj",
    towns: ["Brno", "Znojmo", "Břeclav", "Hodonín"],
    weight: 120,
  },
  {
    code: "CZ-71",
    country: "CZ",
    name: "Olomoucký kraj",
    towns: ["Olomouc", "Prostějov", "Přerov", "Šumperk"],
    weight: 63,
  },
  {
    code: "CZ-72",
    country: "CZ",
    name: "Zlínský kraj",
    towns: ["Zlín", "Uherské Hradiště", "Kroměříž", "Vsetín"],
    weight: 58,
  },
  {
    code: "CZ-80",
    country: "CZ",
    name: "Moravskoslezský kraj",
    towns: ["Ostrava", "Opava", "Frýdek-Místek", "Karviná", "Havířov"],
    weight: 119,
  },
];

export const COUNTRIES: readonly Country[] = ["SK", "CZ"];
export const CURRENCIES: readonly Currency[] = ["EUR", "CZK"];

const byCode = new Map(REGIONS.map((region) => [region.code, region]));

export function regionInfo(code: string): RegionInfo | undefined {
  return byCode.get(code);
}

/** Whether `code` is a region of `country` that the holder knows. */
export function isRegionOf(code: string, country: Country): boolean {
  return byCode.get(code)?.country === country;
}

export function regionsOf(country: Country): RegionInfo[] {
  return REGIONS.filter((region) => region.country === country);
}
