/**
 * THE consent flow, end to end, in headless Chromium against a whole holder (`createHolder`, what
 * `doorbell serve` runs) on SQLite and PostgreSQL:
 *
 *   an agent publishes over MCP (the SDK's Client over Streamable HTTP) → the person opens the
 *   consent URL, fills in the form and submits → opens the confirmation mail in the local mailbox
 *   page → confirms → sees the intent active on the manage page → an offer is imported and the
 *   match shows on the manage page (and in intent_list_matches) → withdraws in one action.
 *
 * Chromium: Debian's `chromium` driven by playwright-core (DESIGN.md). Without /usr/bin/chromium
 * the suite is skipped with a notice, except under CI, where it fails.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { scopedSignalFetch } from "@doorbell/mcp-endpoint";
import { forEachEngine, freePort } from "@doorbell/store/testing";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { pino } from "pino";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHolder, type Holder } from "../../src/app/holder.js";
import { chromiumSuite, launchChromium, navigates } from "../support/chromium.js";

/** Where the screenshots go (made when the suite runs; kept so a person can look at them). */
let SHOTS = "";

const HIDDEN_LIMIT = 16_480;

async function tool<T>(client: Client, name: string, args: Record<string, unknown>): Promise<T> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  if (result.isError) throw new Error(`${name} was refused: ${JSON.stringify(result.content)}`);
  return result.structuredContent as T;
}

/** What the accessibility basics look like on the page in the browser (via CDP, not page script). */
async function accessibilityBasics(page: Page) {
  return page.evaluate(() => {
    const controls = Array.from(document.querySelectorAll("input, select, textarea")).filter(
      (element) => (element as HTMLInputElement).type !== "hidden",
    );
    const unlabelled = controls
      .filter((element) => (element as HTMLInputElement).labels?.length === 0)
      .map((element) => element.outerHTML);
    const unnamedButtons = Array.from(document.querySelectorAll("button, a[href]"))
      .filter((element) => (element.textContent ?? "").trim() === "" && !element.getAttribute("aria-label"))
      .map((element) => element.outerHTML);
    return {
      lang: document.documentElement.lang,
      h1: document.querySelectorAll("h1").length,
      title: document.title,
      unlabelled,
      unnamedButtons,
      scripts: document.scripts.length,
    };
  });
}

/** At 320 CSS pixels wide (a small phone) nothing makes the page scroll sideways. */
async function narrowFits(page: Page): Promise<boolean> {
  await page.setViewportSize({ width: 320, height: 800 });
  return page.evaluate(() => document.documentElement.scrollWidth <= 320);
}

const h1 = async (page: Page) => (await page.locator("h1").textContent())?.trim();

/** Tabs until `selector` has focus; returns its computed outline (visible focus). */
async function focusOutline(page: Page, selector: string): Promise<string> {
  for (let i = 0; i < 30; i += 1) {
    await page.keyboard.press("Tab");
    const found = await page.evaluate((wanted) => document.activeElement?.matches(wanted) ?? false, selector);
    if (found) {
      return page.evaluate(() => {
        const style = getComputedStyle(document.activeElement as Element);
        return `${style.outlineStyle} ${style.outlineWidth}`;
      });
    }
  }
  throw new Error(`${selector} never got the focus by keyboard`);
}

const withChromium = chromiumSuite("consent-flow-chromium", "the Chromium consent flow");

describe.runIf(withChromium)("the consent flow in headless Chromium", () => {
  let browser: Browser;
  beforeAll(async () => {
    SHOTS = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-consent-flow-"));
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    if (SHOTS !== "") console.info(`[consent-flow-chromium] screenshots in ${SHOTS}`);
  });

  forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
    let holder: Holder;
    let origin = "";
    let agent: Client;
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-holder-"));

    beforeAll(async () => {
      const port = await freePort();
      origin = `http://127.0.0.1:${port}`;
      holder = await createHolder({
        dataDir,
        database: engine.url,
        publicUrl: origin,
        env: {},
        log: pino({ level: "silent" }),
        config: { name: "Doorbell demo holder" },
      });
      await holder.listen(port, "127.0.0.1");
      agent = new Client({ name: "chromium-flow-agent", version: "1.0.0" });
      await agent.connect(
        new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), { fetch: scopedSignalFetch() }),
      );
    });
    afterAll(async () => {
      await agent?.close();
      await holder?.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    });

    it("publish over MCP → consent → mailbox → confirm → active → a match arrives → withdraw", async () => {
      const shot = (page: Page, name: string) =>
        page.screenshot({ path: path.join(SHOTS, `${engine.dialect}-${name}.png`), fullPage: true });

      // 1. The agent publishes; it gets a code and a consent URL on the holder's own origin.
      const published = await tool<{
        intent: { id: string; status: string };
        intentCode: string;
        consentUrl: string;
      }>(agent, "intent_publish_intent", {
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
        hiddenLimit: HIDDEN_LIMIT,
      });
      expect(published.intent.status).toBe("awaiting_consent");
      expect(published.consentUrl.startsWith(`${origin}/consent/`)).toBe(true);
      const status = async () =>
        (await tool<{ status: string }>(agent, "intent_get_intent", { intentCode: published.intentCode }))
          .status;

      const context = await browser.newContext({ viewport: { width: 900, height: 900 } });
      const page = await context.newPage();
      const problems: string[] = [];
      page.on("console", (message) => {
        if (message.type() === "error" || message.type() === "warning") problems.push(message.text());
      });
      page.on("pageerror", (error) => problems.push(error.message));
      const posts: Promise<{ url: string; origin: string | undefined; site: string | undefined }>[] = [];
      page.on("request", (request) => {
        if (request.method() === "POST") {
          posts.push(
            request.allHeaders().then((headers) => ({
              url: request.url(),
              origin: headers.origin,
              site: headers["sec-fetch-site"],
            })),
          );
        }
      });

      // 2. The person opens the consent URL.
      const consentResponse = await page.goto(published.consentUrl);
      expect(consentResponse?.status()).toBe(200);
      expect(consentResponse?.headers()["referrer-policy"]).toBe("no-referrer");
      expect(await h1(page)).toBe("Agree to keep this request");
      const consentText = (await page.locator("main").textContent())?.trim();
      expect(consentText).toContain("A Škoda Octavia combi, diesel");
      expect(consentText).toContain("A hidden limit is set.");
      for (const spelling of ["16480", "16,480", "16 480", "16.480"])
        expect(consentText).not.toContain(spelling);
      const basics = await accessibilityBasics(page);
      expect(basics).toMatchObject({ lang: "en", h1: 1, unlabelled: [], unnamedButtons: [], scripts: 0 });
      expect(await page.getByLabel("I agree to the consent text above").isChecked()).toBe(false);
      expect(await focusOutline(page, "#email")).toMatch(/^solid 3px$/);
      await shot(page, "1-consent");
      expect(await narrowFits(page)).toBe(true);
      await shot(page, "1-consent-320px");
      await page.setViewportSize({ width: 900, height: 900 });

      // The browser's own validation stops an unticked submit; nothing is sent.
      await page.getByLabel("Your e-mail address").fill("jana.novakova@example.sk");
      await page.getByRole("button", { name: "Agree and send the confirmation e-mail" }).click();
      expect(await h1(page)).toBe("Agree to keep this request");
      expect(posts).toHaveLength(0);

      // 3. Consent: tick the box and submit.
      await page.getByLabel("I agree to the consent text above").check();
      await navigates(page, () =>
        page.getByRole("button", { name: "Agree and send the confirmation e-mail" }).click(),
      );
      expect(await h1(page)).toBe("Check your e-mail");
      await shot(page, "2-check-your-email");
      expect(await status()).toBe("awaiting_email_confirmation");

      // 4. The local mailbox: the confirmation mail, its links clickable.
      await navigates(page, () => page.getByRole("link", { name: "local mailbox" }).click());
      expect(await h1(page)).toBe("Local mailbox");
      await navigates(page, () =>
        page.getByRole("link", { name: "Confirm your intent at Doorbell demo holder" }).click(),
      );
      expect(await h1(page)).toBe("Confirm your intent at Doorbell demo holder");
      await shot(page, "3-mail");
      const mailUrl = page.url();
      const manageLink = page.locator('a[href*="/manage/"]').first();
      const manageHref = await manageLink.getAttribute("href");
      expect(manageHref).toMatch(new RegExp(`^${origin}/manage/[0-9A-Za-z]+$`));

      // 5. Opening the confirm link changes nothing (mail scanners); the button confirms.
      await navigates(page, () => page.locator('a[href*="/confirm/"]').first().click());
      expect(await h1(page)).toBe("Confirm your e-mail address");
      expect(await status()).toBe("awaiting_email_confirmation");
      await shot(page, "4-confirm");
      await navigates(page, () => page.getByRole("button", { name: "Confirm and start my request" }).click());
      expect(await h1(page)).toBe("Your request is active");
      expect(await status()).toBe("active");
      await shot(page, "5-active");

      // 6. The manage page from the mail: active, no offers yet.
      await page.goto(mailUrl);
      await navigates(page, () => page.locator('a[href*="/manage/"]').first().click());
      expect(await h1(page)).toBe("Your request");
      expect((await page.locator(".badge").textContent())?.trim()).toBe("Active");
      expect((await page.locator("#offers").textContent())?.trim()).toBe("Offers sent to you (0)");

      // 7. A match arrives: the catalogue gets an offer that fits.
      const imported = await holder.services.offers.importCatalogue([
        {
          source: { kind: "catalogue", ref: `chromium-${engine.dialect}`, seller: "Autobazár Senec" },
          title: "Škoda Octavia Combi 2.0 TDI Style",
          description: "One owner, full service history.",
          category: "vehicles",
          price: { amount: 14_200, currency: "EUR" },
          location: { country: "SK", region: "SK-BL" },
          url: "https://cars.example.sk/octavia-combi-2019",
          attributes: { make: "Škoda", model: "Octavia", year: 2019, mileageKm: 98_000, fuel: "diesel" },
          publishedAt: new Date().toISOString(),
        },
      ]);
      expect(imported.matched).toBe(1);
      await page.reload();
      expect((await page.locator("#offers").textContent())?.trim()).toBe("Offers sent to you (1)");
      const offerLink = page.getByRole("link", { name: "Škoda Octavia Combi 2.0 TDI Style" });
      expect(await offerLink.getAttribute("href")).toBe("https://cars.example.sk/octavia-combi-2019");
      expect(await offerLink.getAttribute("rel")).toContain("noreferrer");
      expect((await page.locator("ol.offers").textContent())?.trim()).toContain("14,200 EUR");
      const manageText = (await page.locator("main").textContent())?.trim();
      expect(manageText).not.toContain("jana.novakova");
      expect(await accessibilityBasics(page)).toMatchObject({
        lang: "en",
        h1: 1,
        unlabelled: [],
        scripts: 0,
      });
      expect(await focusOutline(page, "button.danger")).toMatch(/^solid 3px$/);
      await shot(page, "6-manage-with-match");
      expect(await narrowFits(page)).toBe(true);
      await page.setViewportSize({ width: 900, height: 900 });
      const listed = await tool<{ matches: { offer: { title: string } }[] }>(agent, "intent_list_matches", {
        intentCode: published.intentCode,
      });
      expect(listed.matches.map((match) => match.offer.title)).toEqual(["Škoda Octavia Combi 2.0 TDI Style"]);

      // 8. Withdraw in one action.
      await navigates(page, () => page.getByRole("button", { name: "Withdraw this request" }).click());
      expect(await h1(page)).toBe("Your request is withdrawn");
      await shot(page, "7-withdrawn");
      expect(await status()).toBe("withdrawn");

      // What the browser sent with each form, and no CSP complaint or script error on any page.
      const sent = await Promise.all(posts);
      expect(sent.map((post) => new URL(post.url).pathname)).toEqual([
        new URL(published.consentUrl).pathname,
        expect.stringMatching(/^\/confirm\//),
        expect.stringMatching(/^\/manage\/[0-9A-Za-z]+\/withdraw$/),
      ]);
      // Our pages are `no-referrer`, so Chromium sends `Origin: null` with a form POST; the form
      // guard accepts that and relies on Sec-Fetch-Site and the cookie (security.ts).
      for (const post of sent) expect(post).toMatchObject({ origin: "null", site: "same-origin" });
      expect(problems).toEqual([]);
      await context.close();
    });
  });
});
