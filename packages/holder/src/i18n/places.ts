/**
 * The market's countries and regions (ISO 3166-1 and 3166-2 codes) by name in each language.
 * An unknown code is shown as given.
 */
import type { Lang } from "../model/languages.js";

type Names = Readonly<Record<string, string>>;

const REGIONS: Readonly<Record<Lang, Names>> = {
  en: {
    "SK-BC": "Banská Bystrica region",
    "SK-BL": "Bratislava region",
    "SK-KI": "Košice region",
    "SK-NI": "Nitra region",
    "SK-PV": "Prešov region",
    "SK-TA": "Trnava region",
    "SK-TC": "Trenčín region",
    "SK-ZI": "Žilina region",
    "CZ-10": "Prague",
    "CZ-20": "Central Bohemian region",
    "CZ-31": "South Bohemian region",
    "CZ-32": "Plzeň region",
    "CZ-41": "Karlovy Vary region",
    "CZ-42": "Ústí nad Labem region",
    "CZ-51": "Liberec region",
    "CZ-52": "Hradec Králové region",
    "CZ-53": "Pardubice region",
    "CZ-63": "Vysočina region",
    "CZ-64": "South Moravian region",
    "CZ-71": "Olomouc region",
    "CZ-72": "Zlín region",
    "CZ-80": "Moravian-Silesian region",
  },
  sk: {
    "SK-BC": "Banskobystrický kraj",
    "SK-BL": "Bratislavský kraj",
    "SK-KI": "Košický kraj",
    "SK-NI": "Nitriansky kraj",
    "SK-PV": "Prešovský kraj",
    "SK-TA": "Trnavský kraj",
    "SK-TC": "Trenčiansky kraj",
    "SK-ZI": "Žilinský kraj",
    "CZ-10": "Praha",
    "CZ-20": "Stredočeský kraj",
    "CZ-31": "Juhočeský kraj",
    "CZ-32": "Plzenský kraj",
    "CZ-41": "Karlovarský kraj",
    "CZ-42": "Ústecký kraj",
    "CZ-51": "Liberecký kraj",
    "CZ-52": "Královohradecký kraj",
    "CZ-53": "Pardubický kraj",
    "CZ-63": "Kraj Vysočina",
    "CZ-64": "Juhomoravský kraj",
    "CZ-71": "Olomoucký kraj",
    "CZ-72": "Zlínsky kraj",
    "CZ-80": "Moravskosliezsky kraj",
  },
  cs: {
    "SK-BC": "Banskobystrický kraj",
    "SK-BL": "Bratislavský kraj",
    "SK-KI": "Košický kraj",
    "SK-NI": "Nitranský kraj",
    "SK-PV": "Prešovský kraj",
    "SK-TA": "Trnavský kraj",
    "SK-TC": "Trenčínský kraj",
    "SK-ZI": "Žilinský kraj",
    "CZ-10": "Praha",
    "CZ-20": "Středočeský kraj",
    "CZ-31": "Jihočeský kraj",
    "CZ-32": "Plzeňský kraj",
    "CZ-41": "Karlovarský kraj",
    "CZ-42": "Ústecký kraj",
    "CZ-51": "Liberecký kraj",
    "CZ-52": "Královéhradecký kraj",
    "CZ-53": "Pardubický kraj",
    "CZ-63": "Kraj Vysočina",
    "CZ-64": "Jihomoravský kraj",
    "CZ-71": "Olomoucký kraj",
    "CZ-72": "Zlínský kraj",
    "CZ-80": "Moravskoslezský kraj",
  },
};

const COUNTRIES: Readonly<Record<Lang, Names>> = {
  en: { SK: "Slovakia", CZ: "Czechia" },
  sk: { SK: "Slovensko", CZ: "Česko" },
  cs: { SK: "Slovensko", CZ: "Česko" },
};

export function countryName(code: string, lang: Lang): string {
  return COUNTRIES[lang][code] ?? code;
}

export function regionName(code: string, lang: Lang): string {
  return REGIONS[lang][code] ?? code;
}
