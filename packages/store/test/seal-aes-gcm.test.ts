import { inspect } from "node:util";
import { createSealer, Keyring, StoreError } from "@doorbell/store";
import { describe, expect, it } from "vitest";
import { testKey } from "./engines.js";

const keyring = new Keyring([{ id: "k1", key: testKey(1) }]);
const AD = "delivery.endpoint.secret:42";

/** Flips one bit of the decoded body at `offset` (negative: from the end) and re-encodes. */
function flipBit(sealed: string, offset: number): string {
  const [version, kid, body] = sealed.split(".") as [string, string, string];
  const bytes = Buffer.from(body, "base64url");
  const at = offset < 0 ? bytes.length + offset : offset;
  bytes[at] = (bytes[at] as number) ^ 0x01;
  return `${version}.${kid}.${bytes.toString("base64url")}`;
}

const codeOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(StoreError);
    return (error as StoreError).code;
  }
  return undefined;
};

describe("sealing", () => {
  const sealer = createSealer(keyring);

  it("round-trips text and bytes, including empty and non-ASCII values", () => {
    for (const text of ["whsec_abc", "", "émoji 🛎️ and 中文", "x".repeat(10_000)]) {
      expect(sealer.openText(sealer.seal(text, AD), AD)).toBe(text);
    }
    const bytes = Uint8Array.from([0, 1, 2, 255]);
    expect(sealer.open(sealer.seal(bytes, AD), AD)).toEqual(Buffer.from(bytes));
    expect(sealer.openText(sealer.seal("bound to bytes", Buffer.from([9, 9])), Buffer.from([9, 9]))).toBe(
      "bound to bytes",
    );
  });

  it("writes v1.<kid>.<base64url nonce|ciphertext|tag> with a fresh 96-bit nonce each time", () => {
    const a = sealer.seal("same", AD);
    const b = sealer.seal("same", AD);
    expect(a).toMatch(/^v1\.k1\.[A-Za-z0-9_-]+$/);
    expect(a).not.toBe(b);
    const body = Buffer.from(a.split(".")[2] as string, "base64url");
    expect(body.length).toBe(12 + 4 + 16);
    expect(sealer.keyIdOf(a)).toBe("k1");
  });

  it("uses the injected random source for the nonce", () => {
    const fixed = createSealer(keyring, { random: (n) => Buffer.alloc(n, 7) });
    const sealed = fixed.seal("same", AD);
    expect(fixed.seal("same", AD)).toBe(sealed);
    expect(Buffer.from(sealed.split(".")[2] as string, "base64url").subarray(0, 12)).toEqual(
      Buffer.alloc(12, 7),
    );
  });

  it("refuses a value with any flipped bit (nonce, ciphertext or tag)", () => {
    const sealed = sealer.seal("tamper me", AD);
    for (const offset of [0, 11, 12, 20, -16, -1]) {
      expect(codeOf(() => sealer.open(flipBit(sealed, offset), AD))).toBe("ERR_STORE_UNSEAL_FAILED");
    }
  });

  it("refuses a value opened with other associated data (swapped into another row)", () => {
    const sealed = sealer.seal("row 42's secret", "delivery.endpoint.secret:42");
    expect(codeOf(() => sealer.open(sealed, "delivery.endpoint.secret:43"))).toBe("ERR_STORE_UNSEAL_FAILED");
    expect(codeOf(() => sealer.open(sealed, ""))).toBe("ERR_STORE_UNSEAL_FAILED");
  });

  it("refuses a value whose key id was rewritten to another key in the keyring", () => {
    const two = new Keyring([
      { id: "k1", key: testKey(1) },
      { id: "k2", key: testKey(2) },
    ]);
    const sealed = createSealer(two).seal("x", AD);
    expect(codeOf(() => createSealer(two).open(sealed.replace("v1.k1.", "v1.k2."), AD))).toBe(
      "ERR_STORE_UNSEAL_FAILED",
    );
  });

  it("refuses malformed values with ERR_STORE_SEALED_MALFORMED", () => {
    const sealed = sealer.seal("x", AD);
    for (const bad of [
      "",
      "plaintext",
      "v2.k1.AAAA",
      "v1.k1.",
      "v1.k1.AAAA",
      "v1..AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
      `${sealed}=`,
      sealed.replace("v1.k1.", "v1.k1.+"),
    ]) {
      expect(codeOf(() => sealer.open(bad, AD))).toBe("ERR_STORE_SEALED_MALFORMED");
    }
  });

  it("names an unknown key id clearly", () => {
    const other = createSealer(new Keyring([{ id: "k9", key: testKey(9) }]));
    const sealed = other.seal("x", AD);
    let message = "";
    expect(
      codeOf(() => {
        try {
          sealer.open(sealed, AD);
        } catch (error) {
          message = (error as Error).message;
          throw error;
        }
      }),
    ).toBe("ERR_STORE_UNKNOWN_KEY");
    expect(message).toContain("k9");
  });
});

describe("rotation", () => {
  const old = new Keyring([{ id: "2024", key: testKey(1) }]);
  const rotated = new Keyring([
    { id: "2025", key: testKey(2) },
    { id: "2024", key: testKey(1) },
  ]);

  it("opens values sealed under an older key, seals new ones under the current key, and reseals", () => {
    const before = createSealer(old).seal("endpoint secret", AD);
    const sealer = createSealer(rotated);
    expect(sealer.currentKeyId).toBe("2025");
    expect(sealer.openText(before, AD)).toBe("endpoint secret");
    expect(sealer.keyIdOf(sealer.seal("new", AD))).toBe("2025");
    expect(sealer.needsReseal(before)).toBe(true);
    const after = sealer.reseal(before, AD);
    expect(sealer.keyIdOf(after)).toBe("2025");
    expect(sealer.needsReseal(after)).toBe(false);
    expect(sealer.openText(after, AD)).toBe("endpoint secret");
    expect(sealer.reseal(after, AD)).toBe(after);
    // Once resealed, the old key can leave the keyring.
    const retired = createSealer(new Keyring([{ id: "2025", key: testKey(2) }]));
    expect(retired.openText(after, AD)).toBe("endpoint secret");
    expect(codeOf(() => retired.open(before, AD))).toBe("ERR_STORE_UNKNOWN_KEY");
  });

  it("reseal refuses a forged value even when it names the current key", () => {
    const sealer = createSealer(rotated);
    expect(codeOf(() => sealer.reseal(flipBit(sealer.seal("x", AD), 15), AD))).toBe(
      "ERR_STORE_UNSEAL_FAILED",
    );
    expect(codeOf(() => sealer.reseal(sealer.seal("x", AD), "other"))).toBe("ERR_STORE_UNSEAL_FAILED");
  });
});

describe("keyring privacy", () => {
  it("shows key ids, never key bytes, when logged or serialised", () => {
    const key = Buffer.alloc(32, 0xab);
    const ring = new Keyring([{ id: "k1", key }]);
    const shown = [inspect(ring, { showHidden: true, depth: 10 }), JSON.stringify(ring), String(ring)].join(
      "\n",
    );
    expect(shown).toContain("k1");
    expect(shown).not.toContain(key.toString("base64"));
    expect(shown).not.toContain(key.toString("hex"));
    expect(shown).not.toMatch(/171, 171|ab ab/);
  });
});
