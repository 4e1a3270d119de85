// `doorbell serve --operator-page`: /operator off by default, on with the flag (or
// DOORBELL_OPERATOR_PAGE) on a loopback holder, behind the metrics token when one is set (a bearer
// token, or the Basic password a browser asks for), refused in one line on a holder published
// beyond loopback without a token; the summary says which.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { run } from "../src/main.js";
import { captureIo, freePort, serving } from "./command-harness.js";

const dataDir = () => mkdtempSync(join(tmpdir(), "doorbell-serve-operator-"));

describe("doorbell serve and /operator", () => {
  it("is off by default; --operator-page serves it on a loopback holder", async () => {
    const off = await serving(
      ["--port", String(await freePort()), "--no-demo", "--data-dir", dataDir()],
      async (origin) => {
        expect((await fetch(`${origin}/operator`)).status).toBe(404);
      },
      { DOORBELL_LOG_LEVEL: "warn" },
    );
    expect(off.out).toMatch(/Operator page\s+off \(--operator-page turns \/operator on\)/);

    const on = await serving(
      ["--port", String(await freePort()), "--no-demo", "--operator-page", "--data-dir", dataDir()],
      async (origin) => {
        const page = await fetch(`${origin}/operator`);
        expect(page.status).toBe(200);
        expect(await page.text()).toContain("<h1>Deliveries</h1>");
      },
      { DOORBELL_LOG_LEVEL: "warn" },
    );
    expect(on.out).toMatch(/Operator page\s+http:\/\/127\.0\.0\.1:\d+\/operator \(no token: loopback only\)/);
  });

  it("DOORBELL_OPERATOR_PAGE=on with DOORBELL_METRICS_TOKEN: the page needs the token", async () => {
    const token = "operator-scrape-token-5b20";
    const result = await serving(
      ["--port", String(await freePort()), "--no-demo", "--data-dir", dataDir()],
      async (origin) => {
        const refused = await fetch(`${origin}/operator`);
        expect(refused.status).toBe(401);
        expect(refused.headers.get("www-authenticate")).toMatch(/^Basic /);
        const basic = Buffer.from(`operator:${token}`).toString("base64");
        expect(
          (await fetch(`${origin}/operator`, { headers: { authorization: `Basic ${basic}` } })).status,
        ).toBe(200);
        expect(
          (await fetch(`${origin}/operator`, { headers: { authorization: `Bearer ${token}` } })).status,
        ).toBe(200);
      },
      { DOORBELL_OPERATOR_PAGE: "on", DOORBELL_METRICS_TOKEN: token, DOORBELL_LOG_LEVEL: "warn" },
    );
    expect(result.out).toContain("/operator (the metrics token from DOORBELL_METRICS_TOKEN");
    expect(result.out + result.err).not.toContain(token);
  });

  it("refuses an open operator page on a holder published beyond loopback, in one line", async () => {
    const t = captureIo({ DOORBELL_DATA_DIR: dataDir() });
    const code = await run(
      [
        "serve",
        "--port",
        String(await freePort()),
        "--no-demo",
        "--operator-page",
        "--public-url",
        "https://intents.example.sk",
      ],
      t.io,
    );
    expect(code).toBe(1);
    expect(t.err()).toMatch(
      /^doorbell serve: the operator page is on without a token, .*DOORBELL_METRICS_TOKEN.*\n$/,
    );
  });

  it("refuses a DOORBELL_OPERATOR_PAGE that is neither on nor off", async () => {
    const t = captureIo({ DOORBELL_DATA_DIR: dataDir(), DOORBELL_OPERATOR_PAGE: "maybe" });
    const code = await run(["serve", "--port", String(await freePort()), "--no-demo"], t.io);
    expect(code).toBe(2);
    expect(t.err()).toContain('DOORBELL_OPERATOR_PAGE is on or off, not "maybe"');
  });
});
