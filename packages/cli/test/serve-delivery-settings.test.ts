// `doorbell serve --delivery-per-host N --retention-days N --dead-letter-days N` (or their
// variables): the summary says what the delivery worker and the retention prune were given, and a
// value out of range is refused in one line before anything starts.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { run } from "../src/main.js";
import { captureIo, freePort, serving } from "./command-harness.js";

describe("doorbell serve: fair delivery and retention settings", () => {
  it("the summary shows the per-host cap and the retention, from flags and variables", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-serve-delivery-"));
    try {
      const port = await freePort();
      const served = await serving(
        [
          "--port",
          String(port),
          "--data-dir",
          dataDir,
          "--no-demo",
          "--delivery-per-host",
          "3",
          "--dead-letter-days",
          "60",
        ],
        async () => {},
        { DOORBELL_RETENTION_DAYS: "7" },
      );
      expect(served.code).toBe(0);
      expect(served.out).toMatch(
        /Delivery +at most 3 doorbell subscriptions of one host at once per process \(--delivery-per-host\); failed attempts kept 7 days, dead letters 60/,
      );
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);

  it.each([
    [
      ["--delivery-per-host", "0"],
      {},
      '--delivery-per-host takes a whole number from 1 to 1024 (DOORBELL_DELIVERY_PER_HOST), not "0"',
    ],
    [
      [],
      { DOORBELL_RETENTION_DAYS: "a month" },
      '--retention-days takes whole days from 1 to 3650 (DOORBELL_RETENTION_DAYS), not "a month"',
    ],
    [
      ["--dead-letter-days", "0"],
      {},
      '--dead-letter-days takes whole days from 1 to 3650 (DOORBELL_DEAD_LETTER_DAYS), not "0"',
    ],
  ] as const)("refuses %j %j", async (args, env, message) => {
    const t = captureIo({ ...env });
    expect(await run(["serve", "--port", "0", "--public-url", "http://127.0.0.1:1", ...args], t.io)).toBe(2);
    expect(t.err()).toContain(message);
  });
});
