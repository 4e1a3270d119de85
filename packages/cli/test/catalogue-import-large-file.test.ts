/**
 * Issue 16 item 6 through the real command: `doorbell catalogue import` in a process of its own
 * (with its own heap growth applied) still names a bad file's lines when the repeated ref comes
 * after the refs it keeps in memory (REFS_IN_MEMORY = 50,000; the rest are on disk), imports
 * nothing from it, and leaves no spill file behind.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const HEADER = "ref,title,category,price,currency,country,region,make,model\n";
const row = (i: number) =>
  `R-${i},Škoda Octavia ${i},vehicles,${12_000 + (i % 9)},EUR,SK,SK-BL,Škoda,Octavia\n`;
const ROWS = 52_000;

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-cli-import-"));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("doorbell catalogue import of a file past the refs kept in memory", () => {
  it("reports a ref repeated at its end with both lines and imports nothing", () => {
    const file = path.join(dir, "offers.csv");
    const parts = [HEADER];
    for (let i = 1; i <= ROWS; i++) parts.push(row(i));
    parts.push(row(7)); // line ROWS + 2 repeats R-7 from line 8
    fs.writeFileSync(file, parts.join(""));
    const tmp = path.join(dir, "tmp");
    fs.mkdirSync(tmp);
    const result = spawnSync(
      process.execPath,
      [
        "--import",
        "tsx",
        "--conditions=@doorbell/source",
        path.join(import.meta.dirname, "cli-entry.ts"),
        "catalogue",
        "import",
        file,
        "--data-dir",
        path.join(dir, "holder"),
      ],
      {
        encoding: "utf8",
        env: { ...process.env, DOORBELL_LOG_LEVEL: "silent", TMPDIR: tmp, NODE_OPTIONS: "" },
        timeout: 170_000,
      },
    );
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(`line ${ROWS + 2}: ref "R-7" repeats the offer on line 8`);
    expect(result.stdout).toBe("");
    // Checked before the database is opened: nothing created, and the spill file is gone.
    expect(fs.existsSync(path.join(dir, "holder"))).toBe(false);
    expect(fs.readdirSync(tmp).filter((name) => name.startsWith("doorbell-refs-"))).toEqual([]);
  }, 180_000);
});
