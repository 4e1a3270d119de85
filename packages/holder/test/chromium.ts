/**
 * Debian's Chromium for the tests that drive pages (DESIGN.md: `chromium` + playwright-core):
 * where it is, how it starts, and whether a suite runs. Without /usr/bin/chromium a suite is
 * skipped with a notice, except under CI, where starting it fails.
 */
import fs from "node:fs";
import { type Browser, chromium, type Page } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";
const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--no-first-run",
];
const isCi = (() => {
  const value = process.env.CI?.trim().toLowerCase();
  return value !== undefined && value !== "" && value !== "0" && value !== "false";
})();
const haveChromium = fs.existsSync(CHROMIUM);

/** Whether the suite `name` runs; prints why it does not. Use with `describe.runIf`. */
export function chromiumSuite(name: string, what: string): boolean {
  if (!haveChromium && !isCi) {
    console.warn(
      `[${name}] ${CHROMIUM} not found: ${what} is SKIPPED (it fails under CI). Install it with: apt-get install -y chromium`,
    );
  }
  return haveChromium || isCi;
}

/** Headless Chromium; under CI without it, a clear failure. */
export async function launchChromium(): Promise<Browser> {
  if (!haveChromium) throw new Error(`CI is set but ${CHROMIUM} is missing: apt-get install -y chromium`);
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
}

/** Runs `action` (a click) and waits until the page it leads to has loaded. */
export async function navigates(page: Page, action: () => Promise<unknown>): Promise<void> {
  const navigated = page.waitForEvent("framenavigated", (frame) => frame === page.mainFrame());
  await action();
  await navigated;
  await page.waitForLoadState("load");
}
