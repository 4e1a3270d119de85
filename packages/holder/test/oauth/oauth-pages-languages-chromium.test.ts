/**
 * Issue 17 item 8, the OAuth pages in headless Chromium against a whole holder (SQLite and
 * PostgreSQL), in Slovak: the sign-in page's label sits above its own input (they no longer run
 * together), and the approval page names, before its buttons, the host the assistant works from
 * and what it will learn and be able to do, with the consent text and version in Slovak.
 */
import { forEachEngine } from "@doorbell/store/testing";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consentTextFor } from "../../src/i18n/consent-texts.js";
import { isLocalMailbox } from "../../src/mail/local-mailbox.js";
import { defang } from "../../src/model/quoting.js";
import { chromiumSuite, launchChromium, navigates } from "../support/chromium.js";
import {
  authorizationUrl,
  closeHolders,
  EMAIL,
  type HolderOnLoopback,
  holderOn,
  pkce,
  redirectServer,
  registerClient,
  SCOPE,
} from "../support/oauth-harness.js";

const plain = (text: string | null | undefined) => (text ?? "").replace(/\s+/g, " ").trim();

const withChromium = chromiumSuite("oauth-pages-languages-chromium", "the OAuth pages in Slovak");

describe.runIf(withChromium)("the OAuth sign-in and approval pages in Slovak", () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
    let h: HolderOnLoopback;
    let callback: Awaited<ReturnType<typeof redirectServer>>;
    beforeAll(async () => {
      h = await holderOn(engine.url);
      callback = await redirectServer();
    }, 60_000);
    afterAll(async () => {
      await callback?.close();
      await closeHolders(h);
    });

    it("sign-in label above its input; the approval page names the host and what the assistant learns", async () => {
      const clientId = await registerClient(h.origin, callback.url);
      const { challenge } = pkce();
      const context = await browser.newContext({ locale: "sk-SK", viewport: { width: 390, height: 844 } });
      const page = await context.newPage();
      await page.goto(
        authorizationUrl(h.origin, { clientId, redirectUri: callback.url, scope: SCOPE, challenge }),
      );

      // The sign-in page: Slovak, and the label on its own line above the input, with room between.
      expect(await page.evaluate(() => document.documentElement.lang)).toBe("sk");
      expect(plain(await page.locator("h1").textContent())).toBe(
        "Prihláste sa, aby asistent mohol konať za vás",
      );
      const label = page.locator('label[for="email"]');
      const input = page.getByLabel("Vaša e-mailová adresa");
      const labelBox = await label.boundingBox();
      const inputBox = await input.boundingBox();
      if (labelBox === null || inputBox === null) throw new Error("the label or the input is not shown");
      expect(await label.evaluate((element) => getComputedStyle(element).display)).toBe("block");
      expect(labelBox.y + labelBox.height).toBeLessThan(inputBox.y);
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= 390)).toBe(true);

      await input.fill(EMAIL);
      await navigates(page, () =>
        page.getByRole("button", { name: "Pošlite mi odkaz na prihlásenie" }).click(),
      );
      const mailer = h.holder.context.mailer;
      if (!isLocalMailbox(mailer)) throw new Error("the holder has no local mailbox");
      const [mail] = await mailer.listMailbox({ to: EMAIL, limit: 1 });
      const link = /https?:\/\/\S+\/signin\/\S+\/link\/[A-Za-z0-9_-]+/.exec(mail?.text ?? "")?.[0];
      expect(link).toBeDefined();
      await page.goto(link as string);
      await navigates(page, () => page.getByRole("button", { name: "Prihlásiť sa" }).click());

      // The approval page: who, from where, what it learns, then the Slovak consent text.
      expect(plain(await page.locator("h1").textContent())).toBe(
        "Povoliť asistentovi Test assistant konať za vás?",
      );
      // innerText, not textContent: the rendered lines keep the space between a term and its value.
      // biome-ignore lint/performance/useDomNodeTextContent: the rendered text is what is checked
      const facts = plain(await page.locator("dl.facts").innerText());
      // The host is the client's to choose, so it is shown defanged, as every page quotes it.
      const host = defang(new URL(callback.url).host);
      expect(facts).toContain(`Odkiaľ pracuje ${host}`);
      expect(facts).toContain("Čo sa dozvie a čo bude môcť robiť");
      expect(facts).toContain("čítať dopyty, ktoré za vás zverejnil, a ponuky, ktoré k nim prišli");
      expect(facts).toContain("Nikdy sa nedozvie vašu e-mailovú adresu");
      const slovak = consentTextFor(h.holder.context.config, "sk");
      expect(plain(await page.locator("main").textContent())).toContain(slovak.text);
      expect(await page.locator('input[name="consentVersion"]').getAttribute("value")).toBe(slovak.version);
      // The facts come before the buttons.
      const factsTop = (await page.locator("dl.facts").boundingBox())?.y ?? Number.POSITIVE_INFINITY;
      const allowTop =
        (await page.getByRole("button", { name: "Povoliť", exact: true }).boundingBox())?.y ?? 0;
      expect(factsTop).toBeLessThan(allowTop);

      // Allowing with the Slovak version is accepted: the assistant gets its code.
      await navigates(page, () => page.getByRole("button", { name: "Povoliť", exact: true }).click());
      expect(callback.arrivals.at(-1)?.get("code")).toBeTruthy();
      await context.close();
    }, 120_000);
  });
});
