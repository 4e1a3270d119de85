// Seal keys stay secret on the way between data directories: `keys import` refuses a weak key and
// a file (or a redirected stdin) other users can read; `keys export` refuses to write into such a
// file. The redirections are a real process's, as a shell makes them.
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { run } from "../src/main.js";
import { captureIo } from "./command-harness.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-keys-secrecy-"));

function keyFile(name: string, key: Buffer, mode = 0o600): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, `k1:${key.toString("base64")}\n`, { mode });
  fs.chmodSync(file, mode); // writeFileSync's mode is masked by the umask
  return file;
}

async function importing(file: string) {
  const t = captureIo();
  const code = await run(["keys", "import", file, "--data-dir", fs.mkdtempSync(path.join(dir, "d-"))], t.io);
  return { code, err: t.err() };
}

/** The CLI as a real process with stdin and stdout redirected to files. */
function doorbellRedirected(args: string[], stdin: number | "ignore", stdout: number) {
  const entry = path.join(import.meta.dirname, "cli-entry.ts");
  const result = spawnSync(
    process.execPath,
    ["--import", "tsx", "--conditions=@doorbell/source", entry, ...args],
    {
      stdio: [stdin, stdout, "pipe"],
      encoding: "utf8",
      env: { ...process.env, DOORBELL_LOG_LEVEL: "silent", DOORBELL_SEAL_KEYS: "" },
      timeout: 60_000,
    },
  );
  return { code: result.status, err: result.stderr };
}

describe("doorbell keys import refuses keys that are not secret or not random", () => {
  it.each([
    ["32 zero bytes", Buffer.alloc(32)],
    ["a repeated pattern", Buffer.from(Array.from({ length: 32 }, (_, i) => (i % 8) * 31))],
    ["a passphrase", Buffer.from("correct horse battery staple!!!!")],
  ])("%s", async (name, key) => {
    const { code, err } = await importing(keyFile(`weak-${name.replace(/\W/g, "")}`, key));
    expect(code).not.toBe(0);
    expect(err).toMatch(/seal key k1 .*32 random bytes/);
    expect(err).not.toContain(key.toString("base64"));
  });

  it("a file other users can read, and a generated key in a private file is imported", async () => {
    const key = randomBytes(32);
    const open = await importing(keyFile("readable", key, 0o644));
    expect(open.code).not.toBe(0);
    expect(open.err).toMatch(/can be read by other users \(mode 0644\)/);
    expect(open.err).not.toContain(key.toString("base64"));
    expect((await importing(keyFile("private", key))).code).toBe(0);
  });

  it("a stdin redirected from a file other users can read", () => {
    const source = keyFile("stdin-readable", randomBytes(32), 0o644);
    const input = fs.openSync(source, "r");
    const output = fs.openSync(path.join(dir, "stdin-out"), "w");
    try {
      const result = doorbellRedirected(
        ["keys", "import", "-", "--data-dir", path.join(dir, "stdin-d")],
        input,
        output,
      );
      expect(result.code).toBe(1);
      expect(result.err).toMatch(/stdin's file can be read by other users/);
      expect(fs.existsSync(path.join(dir, "stdin-d", "seal-keys"))).toBe(false);
    } finally {
      fs.closeSync(input);
      fs.closeSync(output);
    }
  });
});

describe("doorbell keys export", () => {
  it("refuses to write the keys into a file other users can read, and writes into a private one", async () => {
    const dataDir = path.join(dir, "export-d");
    fs.mkdirSync(dataDir);
    fs.copyFileSync(keyFile("export-keys", randomBytes(32)), path.join(dataDir, "seal-keys"));
    const exportTo = (name: string, mode: number) => {
      const file = path.join(dir, name);
      fs.writeFileSync(file, "", { mode });
      fs.chmodSync(file, mode);
      const fd = fs.openSync(file, "w");
      try {
        return {
          ...doorbellRedirected(["keys", "export", "--data-dir", dataDir], "ignore", fd),
          text: () => fs.readFileSync(file, "utf8"),
        };
      } finally {
        fs.closeSync(fd);
      }
    };
    const readable = exportTo("export-readable", 0o644);
    expect(readable.code).toBe(1);
    expect(readable.err).toMatch(/stdout is a file other users can read \(mode 0644\).*umask 077/);
    expect(readable.text()).toBe("");
    const private_ = exportTo("export-private", 0o600);
    expect(private_.err).toMatch(/^exported 1 seal key/);
    expect(private_.code).toBe(0);
    expect(private_.text()).toMatch(/^k1:[A-Za-z0-9+/=]+\n$/);
  });
});

describe("a weak key already in use", () => {
  it("may stay behind a new current key until values are resealed", async () => {
    const file = path.join(dir, "rotating");
    const fresh = randomBytes(32).toString("base64");
    fs.writeFileSync(file, `k2:${fresh}\nk1:${Buffer.alloc(32).toString("base64")}\n`, { mode: 0o600 });
    expect((await importing(file)).code).toBe(0);
  });
});
