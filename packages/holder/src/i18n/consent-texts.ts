/**
 * The consent text in each language, each with its own version. The configured text
 * (`consentText`/`consentVersion`) is the English one; a translation is shown only when it
 * translates exactly that text: the operator's own `consentTranslations`, or ours when the
 * configured text is our default. Otherwise the page shows the English text, says so, and the
 * person agrees to that. A version id belongs to one language only, so the `consent_version`
 * kept with an intent says which text, in which language, the person agreed to.
 */
import { DEFAULT_LANG, LANGUAGES, type Lang } from "../model/languages.js";

export interface ConsentText {
  lang: Lang;
  version: string;
  text: string;
}

/** The holder's default consent text (English); DEFAULT_CONSENT_TRANSLATIONS translate it. */
export const DEFAULT_CONSENT_TEXT =
  "I ask the holder to keep this intent and to send me, by e-mail, offers from its market that match it, until I withdraw it or it expires. My e-mail address is not given to sellers or to the assistant that published the intent. I can withdraw at any time from any e-mail the holder sends me.";

export type ConsentTranslations = Partial<Record<Exclude<Lang, "en">, { version: string; text: string }>>;

/** The version of DEFAULT_CONSENT_TEXT our translations were made from. */
export const DEFAULT_CONSENT_VERSION = "2026-11-30";

/** Our translations of DEFAULT_CONSENT_TEXT (version DEFAULT_CONSENT_VERSION). */
export const DEFAULT_CONSENT_TRANSLATIONS: Required<ConsentTranslations> = {
  sk: {
    version: "sk-2026-12-01",
    text: "Žiadam túto službu, aby uchovávala tento dopyt a posielala mi e-mailom ponuky zo svojho trhu, ktoré mu zodpovedajú, kým ho nezruším alebo kým neuplynie jeho platnosť. Moja e-mailová adresa sa neposkytne predajcom ani asistentovi, ktorý dopyt zverejnil. Dopyt môžem kedykoľvek zrušiť z ktoréhokoľvek e-mailu, ktorý mi služba pošle.",
  },
  cs: {
    version: "cs-2026-12-01",
    text: "Žádám tuto službu, aby uchovávala tuto poptávku a posílala mi e-mailem nabídky ze svého trhu, které jí odpovídají, dokud ji nezruším nebo dokud nevyprší její platnost. Moje e-mailová adresa nebude poskytnuta prodejcům ani asistentovi, který poptávku zveřejnil. Poptávku mohu kdykoli zrušit z kteréhokoli e-mailu, který mi služba pošle.",
  },
};

const TRANSLATED = LANGUAGES.filter((lang): lang is Exclude<Lang, "en"> => lang !== DEFAULT_LANG);

/** The part of the holder's config that says which consent text is current. */
type ConsentConfig = {
  consentText: string;
  consentVersion: string;
  consentTranslations?: ConsentTranslations | undefined;
};

/** Every current text: English always, each translation that translates the configured text. */
export function consentTexts(config: ConsentConfig): ConsentText[] {
  const texts: ConsentText[] = [
    { lang: DEFAULT_LANG, version: config.consentVersion, text: config.consentText },
  ];
  const ours =
    config.consentText === DEFAULT_CONSENT_TEXT && config.consentVersion === DEFAULT_CONSENT_VERSION;
  const translations = config.consentTranslations ?? (ours ? DEFAULT_CONSENT_TRANSLATIONS : {});
  for (const lang of TRANSLATED) {
    const translation = translations[lang];
    // A version id shared with another text could not say which one was agreed to: not shown.
    if (translation === undefined || texts.some((text) => text.version === translation.version)) continue;
    texts.push({ lang, version: translation.version, text: translation.text });
  }
  return texts;
}

/** The text a page in `lang` shows: its own translation, else the English text. */
export function consentTextFor(config: ConsentConfig, lang: Lang): ConsentText {
  const texts = consentTexts(config);
  return texts.find((text) => text.lang === lang) ?? (texts[0] as ConsentText);
}

/** The current text with this version id, or undefined (an old or unknown version). */
export function consentTextByVersion(config: ConsentConfig, version: unknown): ConsentText | undefined {
  return typeof version === "string"
    ? consentTexts(config).find((text) => text.version === version)
    : undefined;
}

const TRANSLATION_ID = /^(sk|cs)-/;

/**
 * The language of a recorded consent version (what the person's mails are written in): the
 * current text's language, or for an older translation the language its id starts with.
 */
export function consentLanguage(config: ConsentConfig, version: string | null | undefined): Lang {
  const current = consentTextByVersion(config, version);
  if (current !== undefined) return current.lang;
  const prefix = typeof version === "string" ? TRANSLATION_ID.exec(version)?.[1] : undefined;
  return prefix === "sk" || prefix === "cs" ? prefix : DEFAULT_LANG;
}
