/**
 * Issue 17 item 8, per language in headless Chromium against a whole holder on SQLite and
 * PostgreSQL: a Slovak and a Czech browser (Accept-Language from the browser's locale) get the
 * consent page, the mails and the confirm pages in their language with the right `lang`; the
 * consent record names the text and language agreed to; a used confirm link says so before any
 * button; the language switch works and is remembered; the pages and the mailbox table fit at
 * 390 CSS pixels. Screenshots are kept (the path is printed).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { forEachEngine, freePort } from "@doorbell/store/testing";
import { pino } from "pino";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHolder, type Holder } from "../../src/app/holder.js";
import { consentTextFor } from "../../src/i18n/consent-texts.js";
import type { Lang } from "../../src/model/languages.js";
import { chromiumSuite, launchChromium, navigates } from "../support/chromium.js";

let SHOTS = "";
const HOLDER = "Doorbell demo holder";

/** What each language's pages and mails say at each step. */
const CASES = {
  sk: {
    locale: "sk-SK",
    consentH1: "Súhlas s uchovaním dopytu",
    mileage: "Najviac 120 000 km najazdených",
    area: "Bratislavský kraj, Slovensko",
    budget: "15 000 €",
    hiddenLimit: "Skrytý limit je nastavený.",
    email: "Vaša e-mailová adresa",
    agree: "Súhlasím s textom súhlasu uvedeným vyššie",
    submit: "Súhlasiť a poslať potvrdzovací e-mail",
    checkH1: "Skontrolujte si e-mail",
    mailboxLink: "lokálnej schránke",
    mailboxH1: "Lokálna schránka",
    mailSubject: `Potvrďte svoj dopyt v službe ${HOLDER}`,
    mailGreeting: "Dobrý deň,",
    confirmH1: "Potvrďte svoju e-mailovú adresu",
    confirmButton: "Potvrdiť a spustiť môj dopyt",
    activeH1: "Váš dopyt je aktívny",
    usedH1: "Táto e-mailová adresa je už potvrdená",
  },
  cs: {
    locale: "cs-CZ",
    consentH1: "Souhlas s uchováním poptávky",
    mileage: "Nejvýše 120 000 km najeto",
    area: "Bratislavský kraj, Slovensko",
    budget: "15 000 €",
    hiddenLimit: "Skrytý limit je nastaven.",
    email: "Vaše e-mailová adresa",
    agree: "Souhlasím s výše uvedeným textem souhlasu",
    submit: "Souhlasit a poslat potvrzovací e-mail",
    checkH1: "Zkontrolujte si e-mail",
    mailboxLink: "místní schránce",
    mailboxH1: "Místní schránka",
    mailSubject: `Potvrďte svou poptávku ve službě ${HOLDER}`,
    mailGreeting: "Dobrý den,",
    confirmH1: "Potvrďte svou e-mailovou adresu",
    confirmButton: "Potvrdit a spustit mou poptávku",
    activeH1: "Vaše poptávka je aktivní",
    usedH1: "Tato e-mailová adresa je už potvrzená",
  },
} as const satisfies Record<Exclude<Lang, "en">, Record<string, string>>;

/** Text as a person reads it: the locale's no-break spaces as plain ones. */
const plain = (text: string | null | undefined) => (text ?? "").replace(/\s+/g, " ").trim();
const h1 = async (page: Page) => plain(await page.locator("h1").textContent());
const lang = (page: Page) => page.evaluate(() => document.documentElement.lang);

/** At 390 CSS pixels (a common phone) nothing scrolls sideways. */
async function fitsAt390(page: Page): Promise<boolean> {
  await page.setViewportSize({ width: 390, height: 844 });
  return page.evaluate(() => document.documentElement.scrollWidth <= 390);
}

const withChromium = chromiumSuite("pages-languages-chromium", "the per-language Chromium pages");

describe.runIf(withChromium)("the person's pages in Slovak and Czech, in headless Chromium", () => {
  let browser: Browser;
  beforeAll(async () => {
    SHOTS = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-languages-"));
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    if (SHOTS !== "") console.info(`[pages-languages-chromium] screenshots in ${SHOTS}`);
  });

  forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
    let holder: Holder;
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-holder-"));

    beforeAll(async () => {
      const port = await freePort();
      holder = await createHolder({
        dataDir,
        database: engine.url,
        publicUrl: `http://127.0.0.1:${port}`,
        env: {},
        log: pino({ level: "silent" }),
        config: { name: HOLDER },
      });
      await holder.listen(port, "127.0.0.1");
    }, 60_000);
    afterAll(async () => {
      await holder?.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    });

    const publish = async () =>
      holder.services.intents.publish({
        statement: "A Škoda Octavia combi, diesel, at most 120,000 km, near Bratislava",
        criteria: {
          category: "vehicles",
          make: "Škoda",
          model: "Octavia",
          fuel: "diesel",
          mileageMaxKm: 120_000,
        },
        area: { country: "SK", region: "SK-BL" },
        budget: { amount: 15_000, currency: "EUR" },
        hiddenLimit: 16_480,
      });

    for (const code of ["sk", "cs"] as const) {
      const words = CASES[code];
      it(`${code}: consent, mail, confirm and a used link, all in ${code}, with the record naming the ${code} text`, async () => {
        const shot = (page: Page, name: string) =>
          page.screenshot({
            path: path.join(SHOTS, `${engine.dialect}-${code}-${name}.png`),
            fullPage: true,
          });
        const published = await publish();
        const context = await browser.newContext({
          locale: words.locale,
          viewport: { width: 900, height: 900 },
        });
        const page = await context.newPage();
        const problems: string[] = [];
        page.on("console", (message) => {
          if (message.type() === "error" || message.type() === "warning") problems.push(message.text());
        });

        // The consent page in the browser's language, with that language's text and version.
        const response = await page.goto(published.consentUrl);
        expect(response?.status()).toBe(200);
        expect(response?.headers()["content-language"]).toBe(code);
        expect(await lang(page)).toBe(code);
        expect(await h1(page)).toBe(words.consentH1);
        const consent = consentTextFor(holder.context.config, code);
        expect(consent.lang).toBe(code);
        expect(plain(await page.locator("blockquote").textContent())).toBe(consent.text);
        const main = plain(await page.locator("main").textContent());
        for (const expected of [words.mileage, words.area, words.budget, words.hiddenLimit, consent.version])
          expect(main).toContain(expected);
        for (const spelling of ["16480", "16,480", "16 480", "16.480"]) expect(main).not.toContain(spelling);
        expect(
          await page.getByRole("navigation").getByRole("link", { name: "English" }).getAttribute("href"),
        ).toBe("?lang=en");
        await shot(page, "1-consent");
        expect(await fitsAt390(page)).toBe(true);
        await shot(page, "1-consent-390px");
        await page.setViewportSize({ width: 900, height: 900 });

        // Consent in this language: the record says which text, and so which language.
        await page.getByLabel(words.email).fill(`jana.${code}@example.sk`);
        await page.getByLabel(words.agree).check();
        await navigates(page, () => page.getByRole("button", { name: words.submit }).click());
        expect(await h1(page)).toBe(words.checkH1);
        expect(await lang(page)).toBe(code);
        const row = await holder.context.store.db
          .selectFrom("holder_intents")
          .select(["status", "consent_version"])
          .where("id", "=", published.intent.id)
          .executeTakeFirstOrThrow();
        expect(row).toEqual({ status: "awaiting_email_confirmation", consent_version: consent.version });

        // The mailbox (it fits a phone) and the confirmation mail, in the same language.
        await navigates(page, () => page.getByRole("link", { name: words.mailboxLink }).click());
        expect(await h1(page)).toBe(words.mailboxH1);
        expect(await fitsAt390(page)).toBe(true);
        await shot(page, "2-mailbox-390px");
        await page.setViewportSize({ width: 900, height: 900 });
        await navigates(page, () => page.getByRole("link", { name: words.mailSubject }).first().click());
        const mail = plain(await page.locator("pre.mail").textContent());
        expect(mail.startsWith(words.mailGreeting)).toBe(true);
        expect(mail).toContain(published.intent.statement);
        const confirmUrl = await page.locator('a[href*="/confirm/"]').first().getAttribute("href");
        expect(confirmUrl).toMatch(/\/confirm\/[0-9A-Za-z]+$/);

        // The confirm link: a button while open, then "already confirmed" with no button at all.
        await page.goto(confirmUrl as string);
        expect(await h1(page)).toBe(words.confirmH1);
        await navigates(page, () => page.getByRole("button", { name: words.confirmButton }).click());
        expect(await h1(page)).toBe(words.activeH1);
        const used = await page.goto(confirmUrl as string);
        expect(used?.status()).toBe(200);
        expect(await h1(page)).toBe(words.usedH1);
        expect(await page.locator("button").count()).toBe(0);
        await shot(page, "3-confirm-used");

        // The switch: English on request, and remembered for the next page without the parameter.
        await navigates(page, () => page.getByRole("link", { name: "English" }).click());
        expect(await lang(page)).toBe("en");
        expect(await h1(page)).toBe("This e-mail address is already confirmed");
        await page.goto(confirmUrl as string);
        expect(await lang(page)).toBe("en");
        expect(problems).toEqual([]);
        await context.close();
      }, 120_000);
    }

    it("a browser asking for none of our languages gets English; the switch gives Czech", async () => {
      const published = await publish();
      const context = await browser.newContext({ locale: "de-DE" });
      const page = await context.newPage();
      await page.goto(published.consentUrl);
      expect(await lang(page)).toBe("en");
      expect(await h1(page)).toBe("Agree to keep this request");
      await navigates(page, () => page.getByRole("link", { name: "Čeština" }).click());
      expect(await lang(page)).toBe("cs");
      expect(await h1(page)).toBe(CASES.cs.consentH1);
      await context.close();
    }, 60_000);
  });
});
