import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {
  createSealer,
  formatKeyring,
  loadKeyring,
  parseKeyring,
  SEAL_KEYS_ENV,
  StoreError,
} from "@doorbell/store";
import { afterEach, describe, expect, it } from "vitest";
import { testKey } from "./engines.js";

const dirs: string[] = [];
const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-keys-"));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

const b64 = (n: number) => testKey(n).toString("base64");

describe("the generated key file", () => {
  it("is created on first start with mode 0600 in a 0700 directory, and reused on the second", () => {
    const dataDir = path.join(tempDir(), "data");
    const first = loadKeyring({ dataDir, env: {} });
    expect(first.source).toBe("generated-key-file");
    expect(first.created).toBe(true);
    expect(first.path).toBe(path.join(dataDir, "seal-keys"));
    expect(fs.statSync(first.path as string).mode & 0o777).toBe(0o600);
    expect(fs.statSync(dataDir).mode & 0o777).toBe(0o700);
    expect(fs.readdirSync(dataDir)).toEqual(["seal-keys"]); // no temp file left behind

    const sealed = createSealer(first.keyring).seal("survives a restart", "ad");
    const second = loadKeyring({ dataDir, env: {} });
    expect(second.created).toBe(false);
    expect(second.keyring.keyIds).toEqual(first.keyring.keyIds);
    expect(createSealer(second.keyring).openText(sealed, "ad")).toBe("survives a restart");
  });

  it("takes its key and key id from the injected random source", () => {
    let calls = 0;
    const random = (n: number) => testKey(++calls).subarray(0, n);
    const loaded = loadKeyring({ dataDir: tempDir(), env: {}, random });
    expect(loaded.keyring.currentKeyId).toMatch(/^k[0-9a-f]{8}$/);
  });

  it("loses a creation race gracefully: the process that links second reads the winner's key", () => {
    const dataDir = tempDir();
    const winner = formatKeyring([{ id: "winner", key: testKey(7) }]);
    let raced = false;
    // The random source runs while this process prepares its own file: use it to let "another
    // process" finish first.
    const random = (n: number) => {
      if (!raced) {
        raced = true;
        fs.writeFileSync(path.join(dataDir, "seal-keys"), winner, { mode: 0o600 });
      }
      return testKey(3).subarray(0, n);
    };
    const loaded = loadKeyring({ dataDir, env: {}, random });
    expect(loaded.created).toBe(false);
    expect(loaded.keyring.keyIds).toEqual(["winner"]);
    expect(fs.readdirSync(dataDir)).toEqual(["seal-keys"]);
  });

  it("is refused once other users can read it", () => {
    const dataDir = tempDir();
    const { path: file } = loadKeyring({ dataDir, env: {} });
    fs.chmodSync(file as string, 0o644);
    expect(() => loadKeyring({ dataDir, env: {} })).toThrow(
      expect.objectContaining({ code: "ERR_STORE_KEY_FILE" }),
    );
  });
});

describe("key sources", () => {
  it("reads DOORBELL_SEAL_KEYS as kid:base64key pairs, the first current", () => {
    const loaded = loadKeyring({
      env: { [SEAL_KEYS_ENV]: `new:${b64(2)}, old:${b64(1)}` },
      dataDir: tempDir(),
    });
    expect(loaded.source).toBe("env");
    expect(loaded.keyring.currentKeyId).toBe("new");
    expect(loaded.keyring.keyIds).toEqual(["new", "old"]);
  });

  it("accepts base64url keys and a key file with comments and one key per line", () => {
    const file = path.join(tempDir(), "keys");
    fs.writeFileSync(file, `# rotated 2025\nb:${testKey(2).toString("base64url")}\n\na:${b64(1)}\n`, {
      mode: 0o600,
    });
    const loaded = loadKeyring({ keyFile: file, env: { [SEAL_KEYS_ENV]: `env:${b64(3)}` } });
    expect(loaded.source).toBe("key-file");
    expect(loaded.keyring.keyIds).toEqual(["b", "a"]);
  });

  it("round-trips formatKeyring through parseKeyring", () => {
    const text = formatKeyring([
      { id: "x", key: testKey(5) },
      { id: "y", key: testKey(6) },
    ]);
    const sealed = createSealer(parseKeyring(text)).seal("v", "ad");
    expect(createSealer(parseKeyring(text)).openText(sealed, "ad")).toBe("v");
  });

  it("refuses to run without any key source", () => {
    expect(() => loadKeyring({ env: {} })).toThrow(
      expect.objectContaining({ code: "ERR_STORE_KEYRING_MISSING" }),
    );
  });

  it("refuses malformed keys without echoing them", () => {
    const secretish = "c2VjcmV0LWtleS1tYXRlcmlhbC10aGF0LWlzLXRvby1zaG9ydA";
    const bad = [
      `k1:${secretish}`, // wrong length
      secretish, // no kid
      `bad kid:${b64(1)}`,
      `k1:${b64(1)},k1:${b64(2)}`, // duplicate
      `k1:${b64(1)}!!`,
      "",
    ];
    for (const text of bad) {
      let error: unknown;
      try {
        parseKeyring(text);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(StoreError);
      expect((error as StoreError).code).toBe("ERR_STORE_KEYRING_INVALID");
      expect((error as StoreError).message).not.toContain(secretish);
      expect((error as StoreError).message).not.toContain(b64(1));
      expect((error as StoreError).message).not.toContain(b64(2));
    }
  });
});
