// Issue #17 through `doorbell serve`: /metrics off by default, open on a loopback holder with
// --metrics, behind a bearer token with DOORBELL_METRICS_TOKEN, refused in one line on a holder
// published beyond loopback without a token; one JSON access line per request on stderr (not a
// terminal), the token-bearing path redacted.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { run } from "../src/main.js";
import { captureIo, freePort, serving } from "./command-harness.js";

const dataDir = () => mkdtempSync(join(tmpdir(), "doorbell-serve-metrics-"));

describe("doorbell serve and /metrics", () => {
  it("is off by default; --metrics serves it on a loopback holder; every request gets one redacted access line", async () => {
    const port = await freePort();
    const off = await serving(
      ["--port", String(port), "--no-demo", "--data-dir", dataDir()],
      async (origin) => {
        expect((await fetch(`${origin}/metrics`)).status).toBe(404);
      },
      {},
    );
    expect(off.out).toMatch(/Metrics\s+off \(--metrics turns GET \/metrics on\)/);

    const token = "Zq3xR8vT1nW5yB7kL0pD2fH4";
    const on = await serving(
      ["--port", String(await freePort()), "--no-demo", "--metrics", "--data-dir", dataDir()],
      async (origin) => {
        const answer = await fetch(`${origin}/metrics`);
        expect(answer.status).toBe(200);
        const text = await answer.text();
        expect(text).toContain("# TYPE doorbell_delivery_queue_depth gauge");
        expect(text).toContain("# TYPE doorbell_mcp_tool_calls_total counter");
        expect((await fetch(`${origin}/consent/${token}?code=${token}`)).status).toBe(404);
        // The OAuth server's Node routes bypass the app; they get their line too.
        await (
          await fetch(`${origin}/oauth/auth?client_id=nobody&state=${token}`, { redirect: "manual" })
        ).text();
      },
      {},
    );
    expect(on.out).toMatch(/Metrics\s+http:\/\/127\.0\.0\.1:\d+\/metrics \(no token: loopback only\)/);
    const access = on.err
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { event?: string; path?: string; status?: number })
      .filter((line) => line.event === "http.request");
    expect(access.map((line) => line.path)).toEqual([
      "/metrics",
      "/consent/:token?code=*",
      "/oauth/auth?client_id=*&state=*",
    ]);
    expect(access.map((line) => line.status).slice(0, 2)).toEqual([200, 404]);
    expect(access[2]?.status).toBeGreaterThanOrEqual(300);
    expect(on.err).not.toContain(token);
  });

  it("with DOORBELL_METRICS_TOKEN a scrape needs the bearer token", async () => {
    const token = "scrape-token-7d41";
    const result = await serving(
      ["--port", String(await freePort()), "--no-demo", "--data-dir", dataDir()],
      async (origin) => {
        expect((await fetch(`${origin}/metrics`)).status).toBe(401);
        const answer = await fetch(`${origin}/metrics`, { headers: { authorization: `Bearer ${token}` } });
        expect(answer.status).toBe(200);
      },
      { DOORBELL_METRICS_TOKEN: token, DOORBELL_LOG_LEVEL: "warn" },
    );
    expect(result.out).toContain("(bearer token from DOORBELL_METRICS_TOKEN)");
    expect(result.out + result.err).not.toContain(token);
  });

  it("refuses open metrics on a holder published beyond loopback, in one line", async () => {
    const t = captureIo({ DOORBELL_DATA_DIR: dataDir() });
    const code = await run(
      [
        "serve",
        "--port",
        String(await freePort()),
        "--no-demo",
        "--metrics",
        "--public-url",
        "https://intents.example.sk",
      ],
      t.io,
    );
    expect(code).toBe(1);
    expect(t.err()).toMatch(
      /^doorbell serve: \/metrics is on without a token, .*DOORBELL_METRICS_TOKEN.*\n$/,
    );
  });
});
