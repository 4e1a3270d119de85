/**
 * Issue 17 item 8: which language a request gets, and which consent text (and version) a page in
 * that language shows. Pure functions, so no engine matrix.
 */
import { describe, expect, it } from "vitest";
import { defaultConfig } from "../../src/context.js";
import {
  consentLanguage,
  consentTextByVersion,
  consentTextFor,
  consentTexts,
  DEFAULT_CONSENT_TEXT,
} from "../../src/i18n/consent-texts.js";
import { formatArea, formatDateTime, formatMoney, plural } from "../../src/i18n/format.js";
import { languageFromHeader, negotiateLanguage, parseAcceptLanguage } from "../../src/i18n/negotiate.js";

describe("Accept-Language", () => {
  it("picks the best of en, sk and cs by q-value, keeping the header's order on ties", () => {
    expect(languageFromHeader("sk-SK,sk;q=0.9,en;q=0.8")).toBe("sk");
    expect(languageFromHeader("de-DE,cs;q=0.7,sk;q=0.7")).toBe("cs");
    expect(languageFromHeader("en;q=0.2, sk;q=0.9")).toBe("sk");
    expect(languageFromHeader("CS-cz")).toBe("cs");
  });

  it("falls back to nothing for languages we do not have, and to English for a wildcard", () => {
    expect(languageFromHeader("de-DE,fr;q=0.5")).toBeUndefined();
    expect(languageFromHeader("de, *;q=0.1")).toBe("en");
    expect(languageFromHeader(undefined)).toBeUndefined();
    expect(languageFromHeader("")).toBeUndefined();
  });

  it("skips malformed entries and refused ranges instead of failing", () => {
    expect(languageFromHeader("sk;q=0, cs;q=abc, en;q=0.5")).toBe("en");
    expect(languageFromHeader("<script>, sk;q=2, cs")).toBe("cs");
    expect(parseAcceptLanguage("x".repeat(5000))).toEqual([]);
    expect(parseAcceptLanguage(",,;;,sk;;q=1")).toEqual([]);
  });
});

describe("negotiateLanguage", () => {
  it("the switch beats the cookie, the cookie beats the browser, English is the default", () => {
    expect(negotiateLanguage({ query: "cs", cookie: "sk", acceptLanguage: "en" })).toEqual({
      lang: "cs",
      source: "query",
    });
    expect(negotiateLanguage({ query: "de", cookie: "sk", acceptLanguage: "cs" })).toEqual({
      lang: "sk",
      source: "cookie",
    });
    expect(negotiateLanguage({ cookie: "xx", acceptLanguage: "cs-CZ" })).toEqual({
      lang: "cs",
      source: "header",
    });
    expect(negotiateLanguage({ acceptLanguage: "de" })).toEqual({ lang: "en", source: "default" });
  });
});

describe("consent texts per language", () => {
  const config = defaultConfig("https://intents.example.sk");

  it("each language has its own text and a version id that names it", () => {
    const texts = consentTexts(config);
    expect(texts.map((text) => text.lang)).toEqual(["en", "sk", "cs"]);
    expect(new Set(texts.map((text) => text.version)).size).toBe(3);
    expect(consentTextFor(config, "en")).toEqual({
      lang: "en",
      version: config.consentVersion,
      text: DEFAULT_CONSENT_TEXT,
    });
    expect(consentTextFor(config, "sk").text).toMatch(/^Žiadam túto službu/);
    expect(consentTextFor(config, "cs").text).toMatch(/^Žádám tuto službu/);
    expect(consentTextByVersion(config, consentTextFor(config, "sk").version)?.lang).toBe("sk");
    expect(consentTextByVersion(config, "2020-01-01")).toBeUndefined();
  });

  it("an operator's own English text is never shown with our translation of another text", () => {
    const own = { ...config, consentText: "Our own words.", consentVersion: "v7" };
    expect(consentTexts(own).map((text) => text.lang)).toEqual(["en"]);
    expect(consentTextFor(own, "sk")).toEqual({ lang: "en", version: "v7", text: "Our own words." });
    const translated = {
      ...own,
      consentTranslations: {
        sk: { version: "v7-sk", text: "Naše vlastné slová." },
        cs: { version: "v7", text: "Stejné id jako anglický text." },
      },
    };
    expect(consentTextFor(translated, "sk")).toEqual({
      lang: "sk",
      version: "v7-sk",
      text: "Naše vlastné slová.",
    });
    // A translation reusing the English id could not say which text was agreed to.
    expect(consentTextFor(translated, "cs").lang).toBe("en");
  });

  it("a recorded version says which language the person's mails are in", () => {
    expect(consentLanguage(config, config.consentVersion)).toBe("en");
    expect(consentLanguage(config, consentTextFor(config, "cs").version)).toBe("cs");
    expect(consentLanguage(config, "sk-2020-01-01")).toBe("sk");
    expect(consentLanguage(config, null)).toBe("en");
  });
});

describe("formatting per language", () => {
  it("places, money, dates and counted words", () => {
    expect(formatArea({ country: "SK", region: "SK-BL" }, "en")).toBe("Bratislava region, Slovakia");
    expect(formatArea({ country: "SK", region: "SK-BL" }, "sk")).toBe("Bratislavský kraj, Slovensko");
    expect(formatArea({ country: "CZ", region: "CZ-64" }, "cs")).toBe("Jihomoravský kraj, Česko");
    expect(formatMoney({ amount: 15_000, currency: "EUR" }, "en")).toBe("15,000 EUR");
    expect(formatMoney({ amount: 15_000, currency: "EUR" }, "sk").replace(/\s/g, " ")).toBe("15 000 €");
    expect(formatMoney({ amount: 350_000, currency: "CZK" }, "cs").replace(/\s/g, " ")).toBe("350 000 Kč");
    expect(formatDateTime("2026-11-30T12:00:00Z", "en")).toBe("30 Nov 2026, 12:00 UTC");
    expect(formatDateTime("2026-11-30T12:00:00Z", "sk").replace(/\s/g, " ")).toBe("30. 11. 2026, 12:00 UTC");
    const days = { one: "# deň", few: "# dni", other: "# dní" };
    expect([1, 2, 5].map((n) => plural(n, days, "sk"))).toEqual(["1 deň", "2 dni", "5 dní"]);
  });
});
