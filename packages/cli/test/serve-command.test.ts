// `doorbell serve` and `doorbell catalogue import`: flags and environment validated once with a
// printed summary; with no database flag a SQLite file under the data dir, the demo catalogue
// imported once, the local mailbox; on PostgreSQL with --database; a real process stops on SIGTERM.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { scopedSignalFetch } from "@doorbell/holder";
import { forEachEngine } from "@doorbell/store/testing";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { run } from "../src/main.js";
import { captureIo, freePort, serving } from "./command-harness.js";

describe("doorbell serve: refusals before anything starts", () => {
  it.each([
    [["--port", "http"], /--port is a number/],
    [["--port", "70000"], /--port is a number/],
    [["--port", "0"], /--public-url/],
    [["--public-url", "intents.example.sk"], /absolute URL/],
    [["--public-url", "ftp://intents.example.sk"], /http/],
    [["--public-url", "https://intents.example.sk/holder"], /origin only/],
    [["--database", "mysql://x"], /postgres/],
    [["--smtp", "http://mail"], /smtp/],
    [["--demo", "--no-demo"], /not both/],
    [["--colour"], /Unknown option/],
  ])("%j exits 2 with a plain reason", async (args, reason) => {
    const t = captureIo({ DOORBELL_DATA_DIR: mkdtempSync(join(tmpdir(), "doorbell-cli-")) });
    expect(await run(["serve", ...args], t.io)).toBe(2);
    expect(t.err()).toMatch(reason);
  });
});

describe("doorbell serve with no flags but a data dir", () => {
  it("runs on a SQLite file with the demo catalogue and the local mailbox, and prints where everything is", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "doorbell-serve-"));
    const port = await freePort();
    const first = await serving(["--port", String(port), "--data-dir", dataDir], async (origin) => {
      const client = new Client({ name: "t", version: "1" });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), { fetch: scopedSignalFetch() }),
      );
      const found = await client.callTool({
        name: "intent_search_offers",
        arguments: { statement: "Octavia" },
      });
      expect((found.structuredContent as { offers: unknown[] }).offers.length).toBeGreaterThan(0);
      await client.close();
      // Issue #16 item 1: only under the unguessable path of the summary.
      expect((await fetch(`${origin}/dev/mailbox`)).status).toBe(404);
    });
    expect(first.code).toBe(0);
    // The rows are aligned on the longest label, whatever it is.
    expect(first.out).toMatch(new RegExp(`MCP endpoint +http://127\\.0\\.0\\.1:${port}/mcp`));
    expect(first.out).toMatch(
      new RegExp(`Mailbox +http://127\\.0\\.0\\.1:${port}/dev/mailbox/[A-Za-z0-9]{32} `),
    );
    expect(first.out).toMatch(/Database +sqlite:.*holder\.sqlite/);
    expect(first.out).toMatch(/Demo catalogue +imported 3,000 offers/);
    expect(first.out).toMatch(/Seal keys +generated key file .*seal-keys/);
    const second = await serving(["--port", String(port), "--data-dir", dataDir], async () => {});
    expect(second.out).toMatch(/Demo catalogue +already imported/);
  }, 120_000);
});

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let dataDir: string;
  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), "doorbell-serve-"));
  });

  it("serves with --database, --public-url and --no-demo; the URL's password never printed", async () => {
    const port = await freePort();
    const result = await serving(
      ["--port", String(port), "--public-url", `http://localhost:${port}`, "--no-demo"],
      async (origin) => {
        const descriptor = (await (await fetch(`${origin}/.well-known/isto-intents.json`)).json()) as {
          mcp: { endpoint: string };
        };
        expect(descriptor.mcp.endpoint).toBe(`http://localhost:${port}/mcp`);
        expect((await fetch(`${origin}/healthz`)).status).toBe(200);
      },
      { DOORBELL_DATABASE_URL: engine.url, DOORBELL_DATA_DIR: dataDir },
    );
    expect(result.code).toBe(0);
    expect(result.out).toMatch(new RegExp(`Database +${engine.dialect}:`));
    expect(result.out).toMatch(/Demo catalogue +off \(--no-demo\)/);
    expect(result.out + result.err).not.toContain(":doorbell@");
  }, 60_000);

  it("imports a JSON and a CSV catalogue, updates by ref, and refuses a broken file whole", async () => {
    const json = join(dataDir, "offers.json");
    writeFileSync(
      json,
      JSON.stringify([
        {
          source: { ref: "A-1", seller: "Autobazár Zvolen" },
          title: "Škoda Octavia Combi 2.0 TDI",
          category: "vehicles",
          price: { amount: 14900, currency: "EUR" },
          location: { country: "SK", region: "SK-BC" },
          attributes: { make: "Škoda", model: "Octavia", year: 2018, mileageKm: 142000, fuel: "diesel" },
          publishedAt: "2026-11-20T08:00:00Z",
        },
      ]),
    );
    const csv = join(dataDir, "offers.csv");
    writeFileSync(
      csv,
      "ref,title,category,price,currency,country,region,kind,rooms,areaM2\nP-1,Byt 3+1 Brno,property,6500000,CZK,CZ,CZ-64,flat,3,78\n",
    );
    const env = { DOORBELL_DATABASE_URL: engine.url, DOORBELL_DATA_DIR: dataDir };
    const first = captureIo(env);
    expect(await run(["catalogue", "import", json], first.io)).toBe(0);
    expect(first.out()).toMatch(/1 offers read, 1 new, 0 updated, 0 unchanged/);
    const csvRun = captureIo(env);
    expect(await run(["catalogue", "import", csv], csvRun.io)).toBe(0);
    expect(csvRun.out()).toMatch(/1 new/);
    const again = captureIo(env);
    expect(await run(["catalogue", "import", json], again.io)).toBe(0);
    expect(again.out()).toMatch(/0 new, 0 updated, 1 unchanged/);

    const broken = join(dataDir, "broken.csv");
    writeFileSync(
      broken,
      "ref,title,category,price,currency,country\nB-1,,vehicles,-5,EUR,SK\nB-2,Fine,vehicles,100,EUR,XX\n",
    );
    const refused = captureIo(env);
    expect(await run(["catalogue", "import", broken], refused.io)).toBe(1);
    expect(refused.err()).toMatch(/line 2: /);
    expect(refused.err()).toMatch(/line 3: /);
  }, 60_000);
});

describe("doorbell catalogue: refusals", () => {
  it.each([
    [["catalogue"], /say import/],
    [["catalogue", "export"], /unknown catalogue action/],
    [["catalogue", "import"], /which file/],
    [["catalogue", "import", "offers.xml"], /\.json or \.csv/],
  ])("%j exits 2", async (args, reason) => {
    const t = captureIo();
    expect(await run(args, t.io)).toBe(2);
    expect(t.err()).toMatch(reason);
  });

  it("says plainly when the file cannot be read", async () => {
    const t = captureIo({ DOORBELL_DATA_DIR: mkdtempSync(join(tmpdir(), "doorbell-cli-")) });
    expect(await run(["catalogue", "import", "/nonexistent/offers.json"], t.io)).toBe(1);
    expect(t.err()).toMatch(/cannot read \/nonexistent\/offers.json \(ENOENT\)/);
  });
});

describe("the doorbell serve process", () => {
  let child: ChildProcess | undefined;
  afterAll(() => {
    child?.kill("SIGKILL");
  });

  it("prints the summary, serves, and stops cleanly on SIGTERM", async () => {
    const port = await freePort();
    const dataDir = mkdtempSync(join(tmpdir(), "doorbell-proc-"));
    const entry = join(import.meta.dirname, "cli-entry.ts");
    child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        "--conditions=@doorbell/source",
        entry,
        "serve",
        "--port",
        String(port),
        "--no-demo",
        "--data-dir",
        dataDir,
      ],
      { env: { ...process.env, DOORBELL_LOG_LEVEL: "warn", DOORBELL_SEAL_KEYS: "" } },
    );
    let out = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child?.on("exit", (code) => resolve(code)));
    for (let i = 0; i < 300 && !out.includes("Ctrl+C stops"); i++)
      await new Promise((r) => setTimeout(r, 100));
    expect(out).toContain(`http://127.0.0.1:${port}/mcp`);
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(out).toContain("stopping");
  }, 60_000);
});
