/**
 * Doorbells end to end with real processes on loopback (issue #5): `doorbell serve` (the holder),
 * `doorbell forwarder --upstream` and `doorbell agent watch`, each its own Node process, and the
 * person in headless Chromium:
 *
 *   publish through the forwarder → consent and confirm in Chromium → the agent subscribes through
 *   the forwarder → the person allows it from the e-mailed link → `doorbell catalogue import` adds
 *   an offer → the holder rings the forwarder, which re-signs to the agent → the agent reads the
 *   match through the forwarder and prints it → the person stops it on the manage page → the agent
 *   hears subscription.ended through the forwarder and falls back to pulling.
 *
 * Without /usr/bin/chromium the suite is skipped with a notice, except under CI, where it fails.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { type CallToolResult, Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumSuite, launchChromium, navigates } from "../../holder/test/support/chromium.js";
import { freePort, doorbell as spawnDoorbell } from "./cluster-harness.js";

/** One `doorbell …` process from the sources (the shared harness), its seal keys its own. */
const doorbell = (args: string[], env: Record<string, string> = {}) =>
  spawnDoorbell(args.slice(0, 2).join(" "), args, { DOORBELL_SEAL_KEYS: "", ...env });

/** Each holder process's mailbox address, read from its start-up summary. */
const mailboxUrls = new Map<string, string>();

async function tool<T>(client: Client, name: string, args: Record<string, unknown>): Promise<T> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  if (result.isError) throw new Error(`${name} was refused: ${JSON.stringify(result.content)}`);
  return result.structuredContent as T;
}

/** Opens the newest mail whose subject starts with `subject` in the holder's local mailbox. */
async function openMail(page: Page, holder: string, subject: string): Promise<void> {
  // Issue #16 item 1: the mailbox is where the holder's start-up summary says.
  await page.goto(mailboxUrls.get(holder) ?? `${holder}/dev/mailbox`);
  await navigates(page, () =>
    page
      .getByRole("link", { name: new RegExp(`^${subject}`) })
      .first()
      .click(),
  );
}

const withChromium = chromiumSuite("push-end-to-end-processes", "the end-to-end doorbell test");

describe.runIf(withChromium)("doorbells through holder, forwarder and agent processes", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-e2e-"));
  const processes: ReturnType<typeof doorbell>[] = [];
  let browser: Browser;
  let page: Page;
  let client: Client;
  let holder: string;
  let forwarder: string;
  let agent: ReturnType<typeof doorbell>;
  let code: string;

  beforeAll(async () => {
    const [holderPort, forwarderPort] = [await freePort(), await freePort()];
    holder = `http://127.0.0.1:${holderPort}`;
    forwarder = `http://127.0.0.1:${forwarderPort}`;
    const holderProcess = doorbell([
      "serve",
      "--port",
      String(holderPort),
      "--no-demo",
      "--data-dir",
      path.join(dir, "holder"),
    ]);
    processes.push(holderProcess);
    await holderProcess.waitFor("Ctrl+C stops");
    const mailbox = /Mailbox\s+(http\S+)/.exec(holderProcess.out.text)?.[1];
    if (mailbox !== undefined) mailboxUrls.set(holder, mailbox);
    const forwarderProcess = doorbell([
      "forwarder",
      "--upstream",
      `${holder}/mcp`,
      "--port",
      String(forwarderPort),
      "--data-dir",
      path.join(dir, "forwarder"),
      "--webhook-policy",
      "development",
    ]);
    processes.push(forwarderProcess);
    await forwarderProcess.waitFor("Ctrl+C stops");
    client = new Client({ name: "e2e-assistant", version: "1" }, { versionNegotiation: { mode: "auto" } });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${forwarder}/mcp`)));
    browser = await launchChromium();
    page = await (await browser.newContext()).newPage();
  }, 120_000);

  afterAll(async () => {
    await client?.close().catch(() => {});
    await browser?.close();
    for (const process of processes) process.child.kill("SIGTERM");
    await Promise.all(processes.map((process) => process.exited));
    fs.rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it("publishes through the forwarder; the person consents and confirms at the holder in Chromium", async () => {
    const published = await tool<{ intentCode: string; consentUrl: string }>(
      client,
      "intent_publish_intent",
      {
        statement: "A Škoda Octavia combi, diesel, near Bratislava",
        criteria: { category: "vehicles", make: "Škoda", model: "Octavia", fuel: "diesel" },
        area: { country: "SK", region: "SK-BL" },
        budget: { amount: 15_000, currency: "EUR" },
      },
    );
    code = published.intentCode;
    expect(code).toMatch(/^fc_/);
    expect(published.consentUrl.startsWith(`${holder}/consent/`)).toBe(true);

    await page.goto(published.consentUrl);
    await page.getByLabel("Your e-mail address").fill("e2e.person@example.sk");
    await page.getByLabel("I agree to the consent text above").check();
    await navigates(page, () =>
      page.getByRole("button", { name: "Agree and send the confirmation e-mail" }).click(),
    );
    await openMail(page, holder, "Confirm your intent");
    await navigates(page, () => page.locator('a[href*="/confirm/"]').first().click());
    await navigates(page, () => page.getByRole("button", { name: "Confirm and start my request" }).click());
    expect((await page.locator("h1").textContent())?.trim()).toBe("Your request is active");
  }, 60_000);

  it("subscribes the agent through the forwarder; the person allows it from the e-mailed link", async () => {
    const agentPort = await freePort();
    agent = doorbell(
      [
        "agent",
        "watch",
        "--holder",
        `${forwarder}/mcp`,
        "--listen",
        `127.0.0.1:${agentPort}`,
        "--state",
        path.join(dir, "agent", "state.json"),
      ],
      { DOORBELL_INTENT_CODE: code },
    );
    processes.push(agent);
    // The endpoint is proved while the call answers or just after it; the approval mail follows.
    await agent.waitFor(
      /waiting for (the holder to verify this endpoint|the person to approve notifications)/,
    );

    await openMail(page, holder, "Allow an assistant");
    await navigates(page, () => page.locator('a[href*="/notifications/"]').first().click());
    // The person sees who is notified and through whom (§6 rule 3, §7 rule 3).
    expect(await page.locator("main").textContent()).toMatch(
      // The hosts are the agent's to choose: shown defanged, still readable.
      /127\[\.\]0\[\.\]0\[\.\]1, relayed through 127\[\.\]0\[\.\]0\[\.\]1/,
    );
    await navigates(page, () => page.getByRole("button", { name: "Allow these notifications" }).click());
    expect(await page.locator("main").textContent()).toContain("Done: notifications are allowed.");
    // The first doorbell (intent.status.changed, through the forwarder) tells the agent it is on.
    await agent.waitFor("doorbells active");
  }, 60_000);

  it("rings the agent through the forwarder when an offer arrives; the agent reads and prints the match", async () => {
    const file = path.join(dir, "offers.json");
    fs.writeFileSync(
      file,
      JSON.stringify([
        {
          source: { ref: "E2E-1", seller: "Autobazár Senec" },
          title: "Škoda Octavia Combi 2.0 TDI (end to end)",
          category: "vehicles",
          price: { amount: 13_900, currency: "EUR" },
          location: { country: "SK", region: "SK-BL" },
          url: "https://cars.example.sk/e2e-1",
          attributes: { make: "Škoda", model: "Octavia", year: 2019, mileageKm: 98_000, fuel: "diesel" },
          publishedAt: "2026-11-29T08:00:00Z",
        },
      ]),
    );
    const importer = doorbell(["catalogue", "import", file, "--data-dir", path.join(dir, "holder")]);
    expect(await importer.exited).toBe(0);
    await agent.waitFor("Škoda Octavia Combi 2.0 TDI (end to end)", 30_000);
    expect(agent.out.text).toContain("https://cars.example.sk/e2e-1");
  }, 60_000);

  it("stops on the manage page; the agent hears subscription.ended through the forwarder and pulls instead", async () => {
    await openMail(page, holder, "Allow an assistant");
    await navigates(page, () => page.locator('a[href*="/manage/"]').first().click());
    expect(await page.locator("main").textContent()).toContain("Last notified");
    await navigates(page, () => page.getByRole("button", { name: "Stop these notifications" }).click());
    await agent.waitFor(
      /doorbells ended \(approval-withdrawn\); reading matches every 15 minutes instead/,
      30_000,
    );
  }, 60_000);
});
