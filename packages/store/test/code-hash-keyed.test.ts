import { createDecipheriv, createHmac } from "node:crypto";
import { constantTimeEqual, createCodeHasher, createSealer, Keyring } from "@doorbell/store";
import { describe, expect, it } from "vitest";
import { deriveKey } from "../src/derive.js";
import { testKey } from "./engines.js";

const keyring = new Keyring([{ id: "k1", key: testKey(1) }]);

describe("keyed code hashes", () => {
  it("are stable across hasher instances and restarts", () => {
    const a = createCodeHasher(keyring, "intent-code");
    const b = createCodeHasher(new Keyring([{ id: "k1", key: testKey(1) }]), "intent-code");
    expect(a.hash("ABCD-1234")).toBe(b.hash("ABCD-1234"));
    expect(a.hash("ABCD-1234")).toMatch(/^h1\.k1\.[A-Za-z0-9_-]{43}$/);
    expect(a.hash("ABCD-1234")).not.toBe(a.hash("ABCD-1235"));
  });

  it("differ per purpose, per master key, and from a plain HMAC under the master key", () => {
    const code = "ABCD-1234";
    const intent = createCodeHasher(keyring, "intent-code").hash(code);
    const consent = createCodeHasher(keyring, "consent-link").hash(code);
    const otherKey = createCodeHasher(new Keyring([{ id: "k1", key: testKey(2) }]), "intent-code").hash(code);
    expect(new Set([intent, consent, otherKey]).size).toBe(3);
    const plain = createHmac("sha256", testKey(1)).update(code).digest("base64url");
    expect(intent).not.toContain(plain);
  });

  it("use an HKDF key per purpose, distinct from the master key and the sealing key", () => {
    const sealingKey = deriveKey(keyring, "k1", "seal/aes-256-gcm/v1");
    const hashKey = deriveKey(keyring, "k1", "code-hash/v1/intent-code");
    const keys = [testKey(1), sealingKey, hashKey, deriveKey(keyring, "k1", "code-hash/v1/consent-link")];
    expect(new Set(keys.map((k) => k.toString("hex"))).size).toBe(4);
    const expected = createHmac("sha256", hashKey).update("ABCD-1234").digest("base64url");
    expect(createCodeHasher(keyring, "intent-code").hash("ABCD-1234")).toBe(`h1.k1.${expected}`);
    // Sealing uses its own derived key, not the master key.
    const sealed = createSealer(keyring, { random: (n) => Buffer.alloc(n, 1) }).seal("x", "ad");
    const body = Buffer.from(sealed.split(".")[2] as string, "base64url");
    const open = (key: Buffer) => {
      const decipher = createDecipheriv("aes-256-gcm", key, body.subarray(0, 12));
      decipher.setAAD(Buffer.concat([Buffer.from("doorbell-seal:v1:k1"), Buffer.of(0), Buffer.from("ad")]));
      decipher.setAuthTag(body.subarray(body.length - 16));
      return Buffer.concat([
        decipher.update(body.subarray(12, body.length - 16)),
        decipher.final(),
      ]).toString();
    };
    expect(open(sealingKey)).toBe("x");
    expect(() => open(testKey(1))).toThrow();
  });

  it("verify the code against a stored hash and look up under every key after rotation", () => {
    const before = createCodeHasher(keyring, "intent-code");
    const stored = before.hash("ZXCV-0000");
    const rotated = createCodeHasher(
      new Keyring([
        { id: "k2", key: testKey(2) },
        { id: "k1", key: testKey(1) },
      ]),
      "intent-code",
    );
    expect(rotated.verify("ZXCV-0000", stored)).toBe(true);
    expect(rotated.verify("ZXCV-0001", stored)).toBe(false);
    expect(rotated.lookupHashes("ZXCV-0000")).toEqual([rotated.hash("ZXCV-0000"), stored]);
    expect(rotated.hash("ZXCV-0000")).toMatch(/^h1\.k2\./);
    expect(rotated.verify("ZXCV-0000", stored.replace("h1.k1.", "h1.k9."))).toBe(false);
    expect(rotated.verify("ZXCV-0000", "garbage")).toBe(false);
  });

  it("refuse a malformed purpose", () => {
    expect(() => createCodeHasher(keyring, "Intent Code")).toThrow(
      expect.objectContaining({ code: "ERR_STORE_CODE_HASH_INVALID" }),
    );
  });
});

describe("constantTimeEqual", () => {
  it("compares strings and bytes of equal and unequal lengths", () => {
    expect(constantTimeEqual("abc", "abc")).toBe(true);
    expect(constantTimeEqual("abc", "abd")).toBe(false);
    expect(constantTimeEqual("abc", "abcd")).toBe(false);
    expect(constantTimeEqual(Buffer.from("abc"), new TextEncoder().encode("abc"))).toBe(true);
    expect(constantTimeEqual("", "")).toBe(true);
  });
});
