/**
 * A real `doorbell catalogue import` process signalled in the middle of its check, once the refs
 * it has seen have moved to disk (past the REFS_IN_MEMORY kept in memory), leaves nothing in the
 * temporary directory: the refs live in a file no name points to, so no cleanup has to run. The
 * file is a named pipe the test writes part of and keeps open, so the check waits mid-file.
 * Linux only: the test looks for the refs file among the process's open files in /proc.
 */
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const HEADER = "ref,title,category,price,currency,country,region,make,model\n";
const row = (i: number) =>
  `R-${i},Škoda Octavia ${i},vehicles,${12_000 + (i % 9)},EUR,SK,SK-BL,Škoda,Octavia\n`;
// Past the 50,000 refs kept in memory and past the page cache of the refs on disk (SQLite opens
// their file once about 200,000 refs fill it), with room for what the pipe and reader buffer.
const ROWS = 250_000;

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-cli-import-killed-"));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/**
 * The files under `tmp` the process holds open and no name points to any more: a deleted file
 * keeps its old path with " (deleted)" after it. SQLite opens its temporary file by a name and
 * unlinks it just after; waiting for the unlink keeps a signal out of the moment between the two,
 * when the name still exists.
 */
function unlinkedFilesUnder(pid: number, tmp: string): string[] {
  const fdDir = `/proc/${pid}/fd`;
  const links: string[] = [];
  for (const fd of fs.readdirSync(fdDir)) {
    try {
      links.push(fs.readlinkSync(path.join(fdDir, fd)));
    } catch {
      // closed meanwhile
    }
  }
  return links.filter(
    (link) => link.startsWith(tmp) && !link.startsWith(path.join(tmp, "tsx")) && link.endsWith(" (deleted)"),
  );
}

/** What the process left in `tmp`, besides tsx's own compile cache. */
const leftIn = (tmp: string) => fs.readdirSync(tmp).filter((name) => !name.startsWith("tsx"));

async function waitUntil(check: () => boolean, what: string, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.skipIf(process.platform !== "linux")("doorbell catalogue import killed mid-check", () => {
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    it(`leaves no refs file behind on ${signal}`, async () => {
      const work = fs.mkdtempSync(path.join(dir, `${signal}-`));
      const tmp = path.join(work, "tmp");
      fs.mkdirSync(tmp);
      const file = path.join(work, "offers.csv");
      execFileSync("mkfifo", [file]);
      const child = spawn(
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
          path.join(work, "holder"),
        ],
        { env: { ...process.env, DOORBELL_LOG_LEVEL: "silent", TMPDIR: tmp, NODE_OPTIONS: "" } },
      );
      let stderr = "";
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        child.on("exit", (code, signal) => resolve({ code, signal })),
      );
      const pipe = fs.createWriteStream(file);
      pipe.on("error", () => {}); // the reader is gone once the process is killed
      try {
        const parts = [HEADER];
        for (let i = 1; i <= ROWS; i++) parts.push(row(i));
        pipe.write(parts.join(""));
        // The check is reading, the pipe stays open: once its refs are on disk, it is mid-check.
        await waitUntil(
          () => child.exitCode === null && unlinkedFilesUnder(child.pid as number, tmp).length > 0,
          `the refs on disk (stderr: ${stderr})`,
        );
        child.kill(signal);
        expect(await exited).toEqual({ code: null, signal });
      } finally {
        pipe.destroy();
        child.kill("SIGKILL");
      }
      expect(fs.existsSync(path.join(work, "holder"))).toBe(false);
      expect(leftIn(tmp)).toEqual([]);
    }, 120_000);
  }
});
