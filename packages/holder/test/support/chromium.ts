/**
 * The Chromium the page tests drive with playwright-core: where it is, how it starts, and whether
 * a suite runs (always: the browser comes from the npm registry when the machine has none).
 *
 * In order: DOORBELL_TEST_CHROMIUM (set by the test run's global setup, scripts/test-services.ts,
 * to @sparticuz/chromium when there is no system Chromium, with DOORBELL_TEST_CHROMIUM_LIBS for
 * the libraries it brings), then the system's /usr/bin/chromium, then @sparticuz/chromium unpacked
 * here (a test file run outside `npm test`'s configuration).
 */
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";
const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--no-first-run",
];

interface ChromiumBinary {
  executablePath: string;
  /** Extra shared libraries it needs (the npm build on a bare machine), or undefined. */
  libs: string | undefined;
}

async function findChromium(): Promise<ChromiumBinary> {
  const given = process.env.DOORBELL_TEST_CHROMIUM?.trim();
  const libs = process.env.DOORBELL_TEST_CHROMIUM_LIBS?.trim() || undefined;
  if (given) return { executablePath: given, libs };
  if (fs.existsSync(CHROMIUM)) return { executablePath: CHROMIUM, libs: undefined };
  const { default: npmChromium, inflate } = await import("@sparticuz/chromium");
  const bin = path.join(
    path.dirname(path.dirname(createRequire(import.meta.url).resolve("@sparticuz/chromium"))),
    "bin",
  );
  return {
    executablePath: await npmChromium.executablePath(),
    libs: path.join(await inflate(path.join(bin, "al2023.tar.br")), "lib"),
  };
}

/** Whether the suite runs: always, since Chromium comes from npm when the machine has none. */
export function chromiumSuite(_name: string, _what: string): boolean {
  return true;
}

/** Headless Chromium: the system's, or the one from the npm registry. */
export async function launchChromium(): Promise<Browser> {
  const found = await findChromium();
  const env =
    found.libs === undefined
      ? undefined
      : {
          ...process.env,
          LD_LIBRARY_PATH: [found.libs, process.env.LD_LIBRARY_PATH].filter(Boolean).join(":"),
        };
  return chromium.launch({
    executablePath: found.executablePath,
    headless: true,
    args: CHROMIUM_ARGS,
    ...(env === undefined ? {} : { env: env as Record<string, string> }),
  });
}

/** Runs `action` (a click) and waits until the page it leads to has loaded. */
export async function navigates(page: Page, action: () => Promise<unknown>): Promise<void> {
  const navigated = page.waitForEvent("framenavigated", (frame) => frame === page.mainFrame());
  await action();
  await navigated;
  await page.waitForLoadState("load");
}
