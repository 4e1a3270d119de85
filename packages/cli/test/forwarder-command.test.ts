// `doorbell forwarder --upstream <holder MCP url>`: flags checked once (bad input exits 2 and starts
// nothing), then a forwarder in front of a real holder on loopback, reachable with the SDK client,
// with a printed summary that names the upstream and never a secret; it stops when told to.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHolder, type Holder, scopedSignalFetch } from "@doorbell/holder";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { forwarderCommand } from "../src/commands/forwarder.js";
import { run } from "../src/main.js";
import { captureIo, freePort, runUntilChecked } from "./command-harness.js";

describe("doorbell forwarder: refusals before anything starts", () => {
  it.each([
    [[], /--upstream is required/],
    [["--upstream", "intents.example.sk/mcp"], /absolute URL/],
    [["--upstream", "ftp://intents.example.sk/mcp"], /https:\/\//],
    [["--upstream", "https://user:pw@intents.example.sk/mcp"], /user name or password/],
    [["--upstream", "https://intents.example.sk/mcp", "--port", "70000"], /--port is a number/],
    [["--upstream", "https://intents.example.sk/mcp", "--port", "0"], /--public-url/],
    [
      ["--upstream", "https://intents.example.sk/mcp", "--webhook-policy", "lax"],
      /production or development/,
    ],
    [["--upstream", "https://intents.example.sk/mcp", "--public-url", "https://f.example/x"], /origin only/],
    [["--upstream", "https://intents.example.sk/mcp", "--colour"], /Unknown option/],
  ])("%j exits 2 with a plain reason", async (args, reason) => {
    const dir = mkdtempSync(join(tmpdir(), "doorbell-cli-fwd-"));
    const t = captureIo({ DOORBELL_DATA_DIR: dir });
    expect(await run(["forwarder", ...args], t.io)).toBe(2);
    expect(t.err()).toMatch(reason);
    rmSync(dir, { recursive: true, force: true });
  });
});

describe("doorbell forwarder in front of a real holder", () => {
  let holder: Holder;
  let dir: string;
  let mcpUrl: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "doorbell-cli-fwd-"));
    const port = await freePort();
    holder = await createHolder({
      dataDir: join(dir, "holder"),
      publicUrl: `http://127.0.0.1:${port}`,
      log: pino({ level: "silent" }),
    });
    await holder.listen(port, "127.0.0.1");
    mcpUrl = holder.summary.mcpUrl;
  });
  afterAll(async () => {
    await holder?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("serves the ten tools at /mcp, passes calls to the holder, prints a summary and stops", async () => {
    const t = captureIo({ DOORBELL_DATA_DIR: join(dir, "forwarder"), DOORBELL_LOG_LEVEL: "warn" });
    const port = await freePort();
    const { code, failure } = await runUntilChecked(
      (until, ready) =>
        forwarderCommand(
          ["--upstream", mcpUrl, "--port", String(port), "--webhook-policy", "development"],
          t.io,
          { until, onListening: () => ready() },
        ),
      async () => {
        const client = new Client({ name: "cli-test", version: "1.0.0" });
        await client.connect(
          new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), {
            fetch: scopedSignalFetch(),
          }),
        );
        const { tools } = await client.listTools();
        expect(tools).toHaveLength(10);
        const search = await client.callTool({
          name: "intent_search_offers",
          arguments: { statement: "Octavia" },
        });
        expect(search.isError).not.toBe(true);
        expect(search.structuredContent).toHaveProperty("offers");
        await client.close();
      },
    );
    if (failure !== undefined) throw failure;
    expect(code).toBe(0);
    expect(t.out()).toContain(`Upstream holder  ${mcpUrl}`);
    expect(t.out()).toContain(`MCP endpoint     http://127.0.0.1:${port}/mcp`);
    expect(t.out()).toContain("development policy");
    expect(t.out()).toMatch(/generated key file .*forwarder/);
  });
});
