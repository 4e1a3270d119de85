/**
 * The operator page in headless Chromium (playwright-core, the system's Chromium), against a whole
 * holder on loopback with a metrics token, both engines: the browser gives the token as the Basic
 * password; the page breaks no CSP rule (no console error), has one h1, its language, no script,
 * named buttons and a chart image with a title; the chart's screenshot has delivered and failed
 * bars in their colours, more delivered than failed as the figures say; the page fits a phone's
 * width; the replay button is reached by keyboard, shows its focus, and Enter replays the dead
 * letter. Screenshots are kept (the path is printed), in light and dark.
 */
import { once } from "node:events";
import fs from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import type { DeliveryTables } from "@doorbell/delivery";
import { asTables } from "@doorbell/store";
import { forEachEngine } from "@doorbell/store/testing";
import { generateSecret } from "@doorbell/webhooks";
import { pino } from "pino";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHolder, type Holder } from "../../src/app/holder.js";
import { chromiumSuite, launchChromium, navigates } from "../support/chromium.js";
import { freePort } from "../support/loopback.js";

const TOKEN = "operator-chromium-token-9d31";
const DAY = 86_400_000;
let SHOTS = "";

async function receiver() {
  const webhookIds: string[] = [];
  const script: number[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const json = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
        type?: string;
        challenge?: string;
      };
      if (json.type === "verification" && typeof json.challenge === "string") {
        res.writeHead(200, { "content-type": "application/json" });
        return res.end(JSON.stringify({ challenge: json.challenge }));
      }
      webhookIds.push(String(req.headers["webhook-id"]));
      res.writeHead(script.shift() ?? 200).end();
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/chromium`,
    webhookIds,
    script,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Pixels of a PNG near each colour, counted by Chromium itself in a blank page's canvas. */
async function colourCounts(page: Page, png: Buffer, colours: Record<string, [number, number, number]>) {
  return page.evaluate(
    async ({ data, wanted }) => {
      const image = new Image();
      image.src = `data:image/png;base64,${data}`;
      await image.decode();
      const canvas = document.createElement("canvas");
      canvas.width = image.width;
      canvas.height = image.height;
      const context = canvas.getContext("2d") as CanvasRenderingContext2D;
      context.drawImage(image, 0, 0);
      const pixels = context.getImageData(0, 0, image.width, image.height).data;
      const counts: Record<string, number> = {};
      for (const name of Object.keys(wanted)) counts[name] = 0;
      for (let i = 0; i < pixels.length; i += 4) {
        for (const [name, [r, g, b]] of Object.entries(wanted)) {
          const near =
            Math.abs((pixels[i] as number) - r) < 24 &&
            Math.abs((pixels[i + 1] as number) - g) < 24 &&
            Math.abs((pixels[i + 2] as number) - b) < 24;
          if (near) counts[name] = (counts[name] as number) + 1;
        }
      }
      return counts;
    },
    { data: png.toString("base64"), wanted: colours },
  );
}

const withChromium = chromiumSuite("operator-page-chromium", "the operator page in Chromium");

describe.runIf(withChromium)("the operator page in headless Chromium", () => {
  let browser: Browser;
  beforeAll(async () => {
    SHOTS = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-operator-page-"));
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    if (SHOTS !== "") console.info(`[operator-page-chromium] screenshots in ${SHOTS}`);
  });

  forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-operator-chromium-"));
    let holder: Holder;
    let origin = "";
    let hooks: Awaited<ReturnType<typeof receiver>>;

    beforeAll(async () => {
      const port = await freePort();
      origin = `http://127.0.0.1:${port}`;
      holder = await createHolder({
        database: (await engine.createDatabase()).url,
        dataDir,
        publicUrl: origin,
        env: {},
        demo: false,
        oauth: false,
        events: false,
        webhookPolicy: "development",
        background: false,
        log: pino({ level: "silent" }),
        config: { name: "Doorbell demo holder" },
        operatorPage: { token: TOKEN },
      });
      await holder.listen(port, "127.0.0.1");
      hooks = await receiver();
    });
    afterAll(async () => {
      await holder?.close();
      await hooks?.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    });

    it("reads without script, draws the chart, fits a phone, and replays by keyboard", async () => {
      const db = asTables<DeliveryTables>(holder.context.store);
      const sub = await holder.delivery.subscribe(db.db, {
        channel: "mcp-standard",
        subscriberId: "agent-chromium-51f0",
        url: hooks.url,
        secret: generateSecret(),
        expiresAt: Date.now() + 30 * DAY,
        refreshBefore: Date.now() + 27 * DAY,
        requiresApproval: false,
      });
      await holder.delivery.runDue();
      hooks.script.push(200, 200, 200, 413);
      for (const n of [1, 2, 3, 4]) {
        await db.transaction((trx) =>
          holder.delivery.enqueue(trx, sub.id, {
            type: "incident.created",
            eventId: `evt_${n}`,
            data: { n },
          }),
        );
      }
      await holder.delivery.runDue();
      expect(hooks.webhookIds).toEqual(["evt_1", "evt_2", "evt_3", "evt_4"]);

      for (const colorScheme of ["light", "dark"] as const) {
        const context = await browser.newContext({
          viewport: { width: 1280, height: 900 },
          colorScheme,
          httpCredentials: { username: "operator", password: TOKEN },
        });
        const page = await context.newPage();
        const problems: string[] = [];
        page.on("console", (message) => {
          if (message.type() === "error" || message.type() === "warning") problems.push(message.text());
        });
        const answer = await page.goto(`${origin}/operator`);
        expect(answer?.status()).toBe(200);
        const basics = await page.evaluate(() => ({
          lang: document.documentElement.lang,
          h1: document.querySelectorAll("h1").length,
          scripts: document.scripts.length,
          unnamedButtons: Array.from(document.querySelectorAll("button")).filter(
            (button) => (button.getAttribute("aria-label") ?? button.textContent ?? "").trim() === "",
          ).length,
          headerless: Array.from(document.querySelectorAll("table")).filter(
            (table) => table.querySelectorAll("th[scope=col]").length === 0,
          ).length,
          chartTitle: document.querySelector("#chart-hours-title")?.textContent,
          chartRole: document.querySelector("svg.plot")?.getAttribute("role"),
        }));
        expect(basics).toEqual({
          lang: "en",
          h1: 1,
          scripts: 0,
          unnamedButtons: 0,
          headerless: 0,
          chartTitle: "The last 24 hours, by hour (UTC)",
          chartRole: "img",
        });
        // The page's own stylesheet applied (allowed by its hash), nothing refused by the CSP.
        expect(problems).toEqual([]);
        expect(
          await page.evaluate(() => getComputedStyle(document.querySelector(".wrap") as Element).maxWidth),
        ).not.toBe("704px");
        await page.screenshot({
          path: path.join(SHOTS, `${engine.dialect}-${colorScheme}.png`),
          fullPage: true,
        });

        // The chart as drawn: delivered (green) and failed (red) bars, three times as much green.
        const chart = await page.locator("#chart-hours-caption ~ svg").screenshot();
        fs.writeFileSync(path.join(SHOTS, `${engine.dialect}-${colorScheme}-chart.png`), chart);
        const colours: Record<string, [number, number, number]> =
          colorScheme === "light"
            ? { ok: [0x11, 0x63, 0x29], fail: [0xb3, 0x26, 0x1e] }
            : { ok: [0x56, 0xd3, 0x64], fail: [0xff, 0x8a, 0x80] };
        const blank = await context.newPage();
        const counts = await colourCounts(blank, chart, colours);
        await blank.close();
        expect(counts.ok).toBeGreaterThan(0);
        expect(counts.fail).toBeGreaterThan(0);
        expect((counts.ok as number) / (counts.fail as number)).toBeGreaterThan(2);

        // A phone's width: the page does not scroll sideways (wide tables scroll in their region).
        await page.setViewportSize({ width: 390, height: 844 });
        expect(await page.evaluate(() => document.documentElement.scrollWidth <= 390)).toBe(true);
        await page.screenshot({
          path: path.join(SHOTS, `${engine.dialect}-${colorScheme}-390px.png`),
          fullPage: true,
        });
        await context.close();
      }

      // The replay button by keyboard alone: Tab to it, its focus shows, Enter replays.
      const context = await browser.newContext({
        viewport: { width: 1280, height: 900 },
        httpCredentials: { username: "operator", password: TOKEN },
      });
      const page = await context.newPage();
      await page.goto(`${origin}/operator`);
      let outline = "";
      for (let i = 0; i < 40 && outline === ""; i++) {
        await page.keyboard.press("Tab");
        outline = await page.evaluate(() => {
          const active = document.activeElement;
          if (!active?.matches('form[action$="/replay"] button')) return "";
          const style = getComputedStyle(active);
          return `${style.outlineStyle} ${style.outlineWidth}`;
        });
      }
      expect(outline).toBe("solid 3px");
      expect(await page.evaluate(() => document.activeElement?.getAttribute("aria-label"))).toBe(
        "Replay incident.created to agent-chromium-51f0",
      );
      await navigates(page, () => page.keyboard.press("Enter"));
      expect(new URL(page.url()).searchParams.get("replayed")).toMatch(/^dlq_/);
      expect(await page.locator(".notice").textContent()).toContain("is queued again with its webhook-id");
      expect(await page.locator('form[action$="/replay"]').count()).toBe(0);
      await page.screenshot({ path: path.join(SHOTS, `${engine.dialect}-replayed.png`), fullPage: true });
      await context.close();
      await holder.delivery.runDue();
      expect(hooks.webhookIds).toEqual(["evt_1", "evt_2", "evt_3", "evt_4", "evt_4"]);
    });
  });
});
