/** The models the soak's intents want and its offers name in turn (scripts/soak.ts). */
export const SOAK_MODELS = [
  "Octavia",
  "Fabia",
  "Superb",
  "Kodiaq",
  "Karoq",
  "Scala",
  "Kamiq",
  "Enyaq",
  "Rapid",
  "Citigo",
] as const;
