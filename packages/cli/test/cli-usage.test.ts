// The command line itself: `--help` per command (exit 0), `--version`, a usage error as one line
// plus where to read more (exit 2), and failures as one line with their cause, never a stack trace.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { StoreError } from "@doorbell/store";
import { describe, expect, it } from "vitest";
import { errorLine } from "../src/error-line.js";
import { run } from "../src/main.js";
import { captureIo } from "./command-harness.js";

const version = (
  JSON.parse(readFileSync(join(import.meta.dirname, "../package.json"), "utf8")) as { version: string }
).version;
const COMMANDS = [
  "serve",
  "forwarder",
  "catalogue",
  "webhook",
  "agent",
  "check",
  "deliveries",
  "keys",
  "listen",
];
const STACK_FRAME = /^\s+at /m;

/** The CLI as a real process (from its sources): exit code, stdout, stderr. */
function doorbell(args: string[], env: Record<string, string> = {}) {
  const entry = join(import.meta.dirname, "cli-entry.ts");
  const result = spawnSync(
    process.execPath,
    ["--import", "tsx", "--conditions=@doorbell/source", entry, ...args],
    {
      encoding: "utf8",
      env: {
        ...process.env,
        DOORBELL_LOG_LEVEL: "silent",
        DOORBELL_SEAL_KEYS: "",
        DOORBELL_DEBUG: "",
        ...env,
      },
      timeout: 110_000,
    },
  );
  return { code: result.status, out: result.stdout, err: result.stderr };
}

describe("help and version", () => {
  it.each(COMMANDS)(
    "doorbell %s --help prints that command's help on stdout and exits 0",
    async (command) => {
      const t = captureIo();
      expect(await run([command, "--help"], t.io)).toBe(0);
      expect(t.out()).toMatch(new RegExp(`^doorbell ${command}\\b`));
      expect(t.out()).not.toContain("Commands:");
      expect(t.err()).toBe("");
      const short = captureIo();
      expect(await run([command, "-h"], short.io)).toBe(0);
      expect(short.out()).toBe(t.out());
    },
  );

  it("--help wins over other flags and a subcommand, but not after --", async () => {
    const t = captureIo();
    expect(await run(["catalogue", "import", "offers.json", "--port", "x", "--help"], t.io)).toBe(0);
    expect(t.out()).toMatch(/^doorbell catalogue import/);
    const operand = captureIo();
    expect(await run(["webhook", "sign", "--", "--help"], operand.io)).toBe(2);
  });

  it("doorbell --help and doorbell help list every command in one screen", async () => {
    for (const args of [["--help"], ["-h"], ["help"]]) {
      const t = captureIo();
      expect(await run(args, t.io)).toBe(0);
      for (const command of COMMANDS) expect(t.out()).toMatch(new RegExp(`^  ${command}\\s`, "m"));
      expect(t.out().split("\n").length).toBeLessThan(25);
    }
    const topic = captureIo();
    expect(await run(["help", "serve"], topic.io)).toBe(0);
    expect(topic.out()).toMatch(/^doorbell serve/);
  });

  it("doorbell --version prints the package version", async () => {
    for (const flag of ["--version", "-v", "version"]) {
      const t = captureIo();
      expect(await run([flag], t.io)).toBe(0);
      expect(t.out()).toBe(`${version}\n`);
    }
  });

  it("no command prints the overview on stderr and exits 2", async () => {
    const t = captureIo();
    expect(await run([], t.io)).toBe(2);
    expect(t.err()).toContain("Commands:");
    expect(t.out()).toBe("");
  });

  it("catalogue import --help documents both file formats and their fields", async () => {
    const t = captureIo();
    expect(await run(["catalogue", "import", "--help"], t.io)).toBe(0);
    for (const field of [
      "source.ref",
      "ref",
      "title",
      "category",
      "price",
      "currency",
      "country",
      "publishedAt",
    ]) {
      expect(t.out()).toContain(field);
    }
    expect(t.out()).toMatch(/examples\/catalogue/);
  });
});

describe("usage errors: one line, where to read more, exit 2", () => {
  it.each([
    [["serve", "--colour"], "serve"],
    [["serve", "--port", "http"], "serve"],
    [["forwarder"], "forwarder"],
    [["catalogue", "export"], "catalogue"],
    [["webhook", "sign", "--scheme", "x"], "webhook"],
    [["agent", "watch"], "agent"],
    [["check"], "check"],
  ])("%j", async (args, command) => {
    const t = captureIo({ DOORBELL_DATA_DIR: mkdtempSync(join(tmpdir(), "doorbell-cli-")) });
    expect(await run(args, t.io)).toBe(2);
    const lines = t.err().trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(new RegExp(`^doorbell ${command}: \\S`));
    expect(lines[1]).toBe(`see \`doorbell ${command} --help\``);
    expect(t.out()).toBe("");
  });

  it("an unknown command points at doorbell --help", async () => {
    const t = captureIo();
    expect(await run(["frobnicate"], t.io)).toBe(2);
    expect(t.err()).toBe('doorbell: unknown command "frobnicate"\nsee `doorbell --help`\n');
  });
});

// The process tests start a real Node with tsx: seconds each, more on a loaded machine.
describe("failures: one line with the cause, no stack trace", { timeout: 120_000 }, () => {
  it("a wrapped OS error is named after the message, with its code once", () => {
    const cause = Object.assign(new Error("EACCES: permission denied, open '/srv/doorbell/seal-keys'"), {
      code: "EACCES",
    });
    const error = new StoreError("ERR_STORE_KEY_FILE", "cannot create the key file /srv/doorbell/seal-keys", {
      cause,
    });
    expect(errorLine(error, {})).toBe(
      "cannot create the key file /srv/doorbell/seal-keys: EACCES: permission denied, open '/srv/doorbell/seal-keys' (ERR_STORE_KEY_FILE)",
    );
    expect(errorLine(error, { DOORBELL_DEBUG: "1" })).toMatch(STACK_FRAME);
    expect(errorLine("plain", {})).toBe("plain");
  });

  it("serve --host 0.0.0.0 without SMTP: a usage error that says why, no stack trace", () => {
    const dataDir = mkdtempSync(join(tmpdir(), "doorbell-cli-"));
    const result = doorbell(["serve", "--host", "0.0.0.0", "--no-demo", "--data-dir", dataDir]);
    expect(result.code).toBe(2);
    const lines = result.err.trimEnd().split("\n");
    expect(lines.length).toBeLessThanOrEqual(2);
    expect(lines[0]).toMatch(/^doorbell serve: .*--smtp/);
    expect(result.err).not.toMatch(STACK_FRAME);
  });

  it("a SQLite path that cannot exist names the OS error", () => {
    const dir = mkdtempSync(join(tmpdir(), "doorbell-cli-"));
    writeFileSync(join(dir, "file"), "");
    const result = doorbell([
      "serve",
      "--no-demo",
      "--data-dir",
      join(dir, "data"),
      "--database",
      join(dir, "file", "holder.sqlite"),
    ]);
    expect(result.code).toBe(1);
    expect(result.err).toMatch(
      /^doorbell serve: could not open the SQLite database at .*: E[A-Z]+: .*\(ERR_STORE_CONNECT\)$/m,
    );
    expect(result.err).not.toMatch(STACK_FRAME);
  });

  it("a data directory that is a file names the OS error", () => {
    const dir = mkdtempSync(join(tmpdir(), "doorbell-cli-"));
    writeFileSync(join(dir, "file"), "");
    const result = doorbell(["serve", "--no-demo", "--data-dir", join(dir, "file", "data")]);
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/ENOTDIR/);
    expect(result.err).not.toMatch(STACK_FRAME);
  });

  it("a usage error from a real process is two lines on stderr and exit 2", () => {
    const result = doorbell(["serve", "--port", "http"]);
    expect(result.code).toBe(2);
    expect(result.err).toBe(
      'doorbell serve: --port is a number from 0 to 65535, not "http"\nsee `doorbell serve --help`\n',
    );
  });
});

describe("the example catalogue files", () => {
  it.each(["offers.json", "offers.csv"])("examples/catalogue/%s imports cleanly", async (file) => {
    const t = captureIo({
      DOORBELL_DATA_DIR: mkdtempSync(join(tmpdir(), "doorbell-cli-")),
      DOORBELL_LOG_LEVEL: "silent",
    });
    const path = join(import.meta.dirname, "../../../examples/catalogue", file);
    expect(await run(["catalogue", "import", path], t.io)).toBe(0);
    expect(t.out()).toMatch(/3 offers read, 3 new/);
  });
});
