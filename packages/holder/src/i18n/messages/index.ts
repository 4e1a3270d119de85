/** The pages' catalogue for a language. */
import type { Lang } from "../../model/languages.js";
import { cs } from "./cs.js";
import { en, type Messages } from "./en.js";
import { sk } from "./sk.js";

export type { Messages } from "./en.js";

const CATALOGUES: Readonly<Record<Lang, Messages>> = { en, sk, cs };

export function messagesFor(lang: Lang): Messages {
  return CATALOGUES[lang];
}
