/**
 * A client that hangs up before its request is in (it declares 1000 bytes, sends 10 and closes)
 * did nothing wrong to the holder, and the holder did nothing wrong either: the request is logged
 * as the client's abort (status 499, at info or below) and counted under its own label, never as
 * an error line or a 5xx. A whole holder on loopback, the aborts sent over a raw socket to the MCP
 * endpoint and to two page forms (a consent form and the record checker).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { sql } from "@doorbell/store";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createHolder, type Holder } from "../../src/app/holder.js";
import { createHolderLogger } from "../../src/observability/log-format.js";
import { freePort } from "../support/oauth-harness.js";

/** Sends the head and the first 10 of 1000 declared body bytes, then closes the connection. */
function abortMidBody(port: number, target: string, contentType: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => {
      socket.write(
        [
          `POST ${target} HTTP/1.1`,
          `Host: 127.0.0.1:${port}`,
          `Content-Type: ${contentType}`,
          "Accept: application/json, text/event-stream",
          "Content-Length: 1000",
          "",
          "",
        ].join("\r\n"),
      );
      socket.write("0123456789", () => {
        socket.destroy();
        resolve();
      });
    });
    socket.on("error", reject);
  });
}

interface LogRecord {
  level: number;
  event?: string;
  path?: string;
  status?: number;
  msg?: string;
}

describe("a client's abort", () => {
  let holder: Holder;
  let port: number;
  let dataDir: string;
  const lines: string[] = [];
  const records = () => lines.map((line) => JSON.parse(line) as LogRecord);

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), "doorbell-abort-"));
    port = await freePort();
    holder = await createHolder({
      database: path.join(dataDir, "holder.db"),
      dataDir,
      publicUrl: `http://127.0.0.1:${port}`,
      env: {},
      demo: false,
      oauth: {},
      events: false,
      metrics: {},
      log: createHolderLogger({ level: "debug", format: "json", write: (line) => lines.push(line) }),
    });
    await holder.listen(port, "127.0.0.1");
  });
  afterAll(async () => {
    await holder?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** The access-log line of the request to `shown`, once the holder has written it. */
  async function accessLine(shown: string, status?: number): Promise<LogRecord> {
    for (let i = 0; i < 400; i++) {
      const found = records().find(
        (record) =>
          record.event === "http.request" &&
          record.path === shown &&
          (status === undefined || record.status === status),
      );
      if (found !== undefined) return found;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`no access-log line for ${shown}`);
  }

  it("is logged as status 499 at info or below and counted as aborted, never as an error or a 5xx", async () => {
    // Libraries under the holder (Koa, the node server) print errors to stderr on their own.
    const printed = vi.spyOn(console, "error");
    const form = "application/x-www-form-urlencoded";
    await abortMidBody(port, "/mcp", "application/json");
    await abortMidBody(port, "/consent/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", form);
    await abortMidBody(port, "/check", form);
    await abortMidBody(port, "/oauth/reg", "application/json");
    await abortMidBody(port, "/oauth/token", form);

    for (const shown of ["/mcp", "/consent/:token", "/check", "/oauth/reg", "/oauth/token"]) {
      const line = await accessLine(shown);
      expect(line.status, shown).toBe(499);
      expect(line.level, shown).toBeLessThanOrEqual(30);
    }
    const loud = records().filter((record) => record.level >= 40);
    expect(loud.map((record) => `${record.event} ${record.msg}`)).toEqual([]);
    expect(printed).not.toHaveBeenCalled();
    printed.mockRestore();

    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    for (const route of ["/mcp", "/consent/:token", "/check", "/oauth/reg", "/oauth/token"]) {
      expect(text, route).toContain(
        `doorbell_http_requests_total{route="${route}",method="POST",status="aborted"} 1`,
      );
    }
    expect(text).not.toMatch(/doorbell_http_requests_total\{[^}]*status="5xx"/);
  });

  it("leaves a real failure of the holder an error line and a 5xx", async () => {
    // The consent page's table gone from under the holder: a failure no client caused.
    await sql`alter table holder_intents rename to holder_intents_gone`.execute(holder.context.store.db);
    try {
      const page = await fetch(
        `http://127.0.0.1:${port}/consent/BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB`,
      );
      expect(page.status).toBe(500);
    } finally {
      await sql`alter table holder_intents_gone rename to holder_intents`.execute(holder.context.store.db);
    }
    const line = await accessLine("/consent/:token", 500);
    expect(line.level).toBe(30);
    expect(records().some((record) => record.level === 50 && record.msg === "holder page failed")).toBe(true);
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(text).toContain(
      `doorbell_http_requests_total{route="/consent/:token",method="GET",status="5xx"} 1`,
    );
  });
});
