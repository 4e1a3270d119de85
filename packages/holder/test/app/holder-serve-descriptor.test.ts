// createHolder: one call builds the store, keys, services, matching index, expiry timer, MCP
// endpoint and pages, on SQLite or PostgreSQL; serves the holder descriptor, an empty JWKS and
// /healthz; imports the demo catalogue once; and closes cleanly.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { AGGREGATOR_NOTE, PUSH_TOOL_NAMES, TOOL_NAMES } from "@doorbell/intents";
import { scopedSignalFetch } from "@doorbell/mcp-endpoint";
import { forEachEngine } from "@doorbell/store/testing";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHolder, type Holder } from "../../src/app/holder.js";
import { createHolderApp, type HolderDescriptor } from "../../src/web/app.js";
import { startHolder } from "../support/mcp-harness.js";

const schema = JSON.parse(
  fs.readFileSync(new URL("../../schemas/holder-descriptor.schema.json", import.meta.url), "utf8"),
) as { required: string[]; properties: Record<string, { required?: string[]; properties?: object }> };

const silent = pino({ level: "silent" });

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let dataDir: string;
  let holder: Holder;
  let origin: string;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-holder-"));
    holder = await createHolder({
      database: engine.url,
      dataDir,
      env: {},
      log: silent,
      publicUrl: "http://127.0.0.1:8080",
      demo: true,
      config: { name: "Test holder" },
    });
    ({ url: origin } = await holder.listen(0, "127.0.0.1"));
  }, 120_000);
  afterAll(async () => {
    await holder?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it("summarises what it runs on, without secrets", () => {
    expect(holder.summary).toMatchObject({
      name: "Test holder",
      mcpUrl: "http://127.0.0.1:8080/mcp",
      dialect: engine.dialect,
      keys: "generated-key-file",
      mail: expect.stringMatching(/local mailbox/),
      // Issue #16 item 1: under an unguessable path.
      mailboxUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:8080\/dev\/mailbox\/[A-Za-z0-9]{32}$/),
    });
    expect(holder.summary.database).not.toMatch(/:doorbell@/);
    expect(fs.statSync(path.join(dataDir, "seal-keys")).mode & 0o077).toBe(0);
  });

  it("refuses to serve the local mailbox beyond loopback", async () => {
    await expect(holder.listen(0, "0.0.0.0")).rejects.toThrow(
      /listen on a loopback address \(not 0\.0\.0\.0\) or configure --smtp/,
    );
  });

  it("serves the holder descriptor", async () => {
    const response = await fetch(`${origin}/.well-known/isto-intents.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/application\/json/);
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
    const descriptor = (await response.json()) as HolderDescriptor;
    expect(descriptor).toMatchObject({
      descriptorVersion: "0.1",
      name: "Test holder",
      protocol: { version: "0.1", binding: "mcp" },
      profiles: ["consent-link", "push"],
      countries: ["SK", "CZ"],
      categories: ["vehicles", "property"],
      languages: ["sk", "cs", "en"],
      mcp: { endpoint: "http://127.0.0.1:8080/mcp", transport: "streamable-http" },
      // Where a forwarder ends a subscription whose agent's side ended, without the intentCode.
      push: { endUrl: "http://127.0.0.1:8080/push/end" },
      jwksUri: "http://127.0.0.1:8080/.well-known/jwks.json",
    });
    expect(descriptor.demandGrid.budgetBands.map((band) => band.id)).toEqual(
      holder.services.demand.grid().budgetBands.map((band) => band.id),
    );
    // The published JSON Schema names exactly these fields; push only with the push profile.
    expect(Object.keys(descriptor).sort()).toEqual([...schema.required, "push"].sort());
    expect(Object.keys(schema.properties).sort()).toEqual(Object.keys(descriptor).sort());
  });

  it("serves an empty JWKS and /healthz", async () => {
    expect(await (await fetch(`${origin}/.well-known/jwks.json`)).json()).toEqual({ keys: [] });
    const health = await fetch(`${origin}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: "ok" });
    const home = await (await fetch(`${origin}/`)).text();
    expect(home).toContain("http://127.0.0.1:8080/mcp");
    expect((await fetch(`${origin}/nothing-here`)).status).toBe(404);
  });

  it("imported the demo catalogue, and imports it only once", async () => {
    expect(holder.summary.demo).toMatchObject({ skipped: false });
    expect(holder.summary.demo?.imported).toBeGreaterThan(1000);
    const again = await createHolder({ database: engine.url, dataDir, env: {}, log: silent, demo: true });
    try {
      expect(again.summary.demo).toEqual({ imported: 0, skipped: true });
    } finally {
      await again.close();
    }
  }, 120_000);

  it("answers MCP with the eight tools and the two push tools, and serves the consent page of a published intent", async () => {
    const client = new Client({ name: "t", version: "1" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), { fetch: scopedSignalFetch() }),
    );
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([...TOOL_NAMES, ...PUSH_TOOL_NAMES].sort());
    for (const tool of tools) expect(tool.description).toContain(AGGREGATOR_NOTE);
    const found = await client.callTool({
      name: "intent_search_offers",
      arguments: { statement: "Škoda", limit: 3 },
    });
    expect((found.structuredContent as { offers: unknown[] }).offers).toHaveLength(3);
    const published = await client.callTool({
      name: "intent_publish_intent",
      arguments: { statement: "Byt 2+1 v Brne", area: { country: "CZ", region: "CZ-64" } },
    });
    const { consentUrl } = published.structuredContent as { consentUrl: string };
    expect(consentUrl.startsWith("http://127.0.0.1:8080/consent/")).toBe(true);
    const page = await fetch(`${origin}${new URL(consentUrl).pathname}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("Byt 2+1 v Brne");
    await client.close();
  });
});

describe("/healthz", () => {
  forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
    it("answers 503 when the database does not", async () => {
      const h = await startHolder(engine);
      try {
        const app = createHolderApp({
          config: h.ctx.config,
          services: {
            intents: h.services.intents,
            consent: h.services.consent,
            matches: h.services.matching,
            demand: h.services.demand,
          },
          mcp: h.mcp,
          languages: ["en"],
          healthy: async () => {
            throw new Error("connection refused");
          },
          log: h.ctx.log,
        });
        const response = await app.fetch(new Request("http://127.0.0.1/healthz"));
        expect(response.status).toBe(503);
        expect(await response.json()).toEqual({ status: "unavailable" });
      } finally {
        await h.close();
      }
    });
  });
});
