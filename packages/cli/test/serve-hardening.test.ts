// Issue #16 item 7 and issue #14 item 1, from the command line: a holder that would serve the
// local mailbox beyond this machine is refused in one line with exit code 2 (a real process, so
// nothing uncaught and no stack trace), the summary says plainly when the development egress
// policy is in use, and --trust-proxy / --limit (or their environment variables) reach the holder.
import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chooseHeapBound, type Holder } from "@doorbell/holder";
import { describe, expect, it } from "vitest";
import { serveCommand } from "../src/commands/serve.js";
import { run } from "../src/main.js";
import { captureIo, freePort, runUntilChecked } from "./command-harness.js";

const ENTRY = fileURLToPath(new URL("./cli-entry.ts", import.meta.url));

describe("doorbell serve: startup refusals", () => {
  it("refuses --host 0.0.0.0 without SMTP in one line, exit code 2, before anything starts", () => {
    const dataDir = mkdtempSync(join(tmpdir(), "doorbell-serve-public-"));
    const child = spawnSync(
      process.execPath,
      [
        "--import",
        "tsx",
        "--conditions=@doorbell/source",
        ENTRY,
        "serve",
        "--host",
        "0.0.0.0",
        "--port",
        "0",
        "--public-url",
        "http://127.0.0.1:1",
        "--data-dir",
        dataDir,
      ],
      {
        encoding: "utf8",
        env: { ...process.env, DOORBELL_SMTP_URL: "", DOORBELL_DEBUG: "" },
        timeout: 60_000,
      },
    );
    expect(child.status).toBe(2);
    const lines = child.stderr.split("\n").filter((line) => line !== "");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^doorbell serve: --host 0\.0\.0\.0 .*--smtp/);
    expect(child.stderr).not.toMatch(/\n\s+at /);
    expect(child.stdout).toBe("");
  }, 90_000);

  it.each([
    [["--trust-proxy", "10.0.0.0/40"], /--trust-proxy: .*CIDR/],
    [["--trust-proxy", "proxy.example"], /--trust-proxy: .*CIDR/],
    [["--limit", "mail.recipient=three"], /--limit: .*bucket=points\/seconds/],
    [["--limit", "mail.everything=3/60"], /--limit: unknown limit/],
    [["--digest-window", "15m"], /--digest-window takes whole minutes from 0 to 1440/],
    [["--digest-window=-1"], /--digest-window takes whole minutes/],
    [["--digest-window", "1441"], /--digest-window takes whole minutes/],
    [["--mcp-concurrency", "0"], /--mcp-concurrency takes a whole number from 1 to 100000/],
    [["--mcp-concurrency", "ten"], /--mcp-concurrency takes a whole number/],
    [["--mcp-queue=-1"], /--mcp-queue takes a whole number from 0 to 100000/],
    [
      ["--heap-bound", "1.5GB"],
      /--heap-bound takes whole megabytes \(0 for none\) from 0 to 1048576 \(DOORBELL_HEAP_BOUND_MB\), not "1.5GB"/,
    ],
    [["--heap-bound=-1"], /--heap-bound takes whole megabytes/],
  ])("%j exits 2 with a plain reason", async (args, reason) => {
    const t = captureIo({ DOORBELL_DATA_DIR: mkdtempSync(join(tmpdir(), "doorbell-cli-")) });
    expect(await run(["serve", ...args], t.io)).toBe(2);
    expect(t.err()).toMatch(reason);
  });
});

describe("doorbell serve: the summary and the limits", () => {
  it("takes --digest-window over its variable, and 0 mails every import's matches at once", async () => {
    const port = await freePort();
    const t = captureIo({ DOORBELL_DIGEST_WINDOW_MINUTES: "30" });
    let holder: Holder | undefined;
    const dataDir = mkdtempSync(join(tmpdir(), "doorbell-serve-digest-"));
    const { code, failure } = await runUntilChecked(
      (until, ready) =>
        serveCommand(
          ["--port", String(port), "--data-dir", dataDir, "--no-demo", "--digest-window", "0"],
          t.io,
          {
            until,
            onListening: (h) => {
              holder = h;
              ready(undefined);
            },
          },
        ),
      async () => {
        expect(holder?.context.config.digestWindowMs).toBe(0);
        // No --heap-bound: the bound chosen from this machine.
        expect(holder?.mcp.admission.limits.heapBound).toBe(chooseHeapBound());
      },
    );
    if (failure !== undefined) throw failure;
    expect(code).toBe(0);
    expect(t.out()).toMatch(/Match digests +each import's matches mailed at once/);
    const mb = Math.round(chooseHeapBound() / (1024 * 1024)).toLocaleString("en-US");
    expect(t.out()).toContain(`no new request while the JavaScript heap is over ${mb} MB (--heap-bound)`);
  }, 120_000);

  it("says when the development egress policy is in use, and passes --trust-proxy and DOORBELL_LIMITS on", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "doorbell-serve-limits-"));
    const port = await freePort();
    const t = captureIo({
      DOORBELL_LIMITS: "mail.recipient=1/600, oauth.register=2/60",
      DOORBELL_DIGEST_WINDOW_MINUTES: "5",
      DOORBELL_MCP_QUEUE: "0",
      DOORBELL_HEAP_BOUND_MB: "768",
    });
    let holder: Holder | undefined;
    const { code, failure } = await runUntilChecked(
      (until, ready) =>
        serveCommand(
          [
            "--port",
            String(port),
            "--data-dir",
            dataDir,
            "--no-demo",
            "--trust-proxy",
            "10.0.0.0/8,fd00::/8",
            "--mcp-concurrency",
            "4",
          ],
          t.io,
          {
            until,
            onListening: (h) => {
              holder = h;
              ready(undefined);
            },
          },
        ),
      async () => {
        expect(holder?.limits.rules["mail.recipient"]).toEqual({ points: 1, durationSeconds: 600 });
        expect(holder?.limits.rules["oauth.register"]).toEqual({ points: 2, durationSeconds: 60 });
        expect(holder?.limits.rules["mail.client"]).toEqual({ points: 10, durationSeconds: 3600 });
        // The proxy's word is taken for the client address, IPv6 by /64.
        const headers = new Headers({ "x-forwarded-for": "2001:db8:5:6::77" });
        expect(holder?.limits.clientKey("10.1.2.3", headers)).toBe("2001:db8:5:6::/64");
        expect(holder?.limits.clientKey("192.0.2.9", headers)).toBe("192.0.2.9");
        expect(holder?.context.config.digestWindowMs).toBe(5 * 60_000);
        expect(holder?.mcp.admission.limits).toEqual({
          concurrent: 4,
          waiting: 0,
          heapBound: 768 * 1024 * 1024,
        });
      },
    );
    if (failure !== undefined) throw failure;
    expect(code).toBe(0);
    expect(t.out()).toMatch(
      /Egress +DEVELOPMENT policy: doorbells and client metadata fetches may go to http and loopback/,
    );
    expect(t.out()).toMatch(/Match digests +at most one per intent every 5 minutes/);
    expect(t.out()).toMatch(
      /MCP admission +4 requests at once per process, 0 waiting; then 503 .*; no new request while the JavaScript heap is over 768 MB \(--heap-bound\)/,
    );
    expect(t.out()).toMatch(
      /Client address +from X-Forwarded-For when sent by 10\.0\.0\.0\/8, fd00::\/8; Forwarded is ignored/,
    );
  }, 120_000);
});
