import { createHmac } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { hmacKey, hmacSha256Base64 } from "../src/standard/hmac.js";

const reference = (key: Uint8Array, prefix: string, body: Uint8Array): string =>
  createHmac("sha256", key).update(prefix, "utf8").update(body).digest("base64");

describe("hmacSha256Base64", () => {
  it("is createHmac's HMAC-SHA256 for any key, prefix and body", () => {
    fc.assert(
      fc.property(
        // Keys shorter than, equal to and longer than the 64-byte block (the last are hashed first).
        fc.uint8Array({ minLength: 0, maxLength: 100 }),
        fc.string({ unit: "grapheme", maxLength: 40 }),
        fc.uint8Array({ maxLength: 5000 }),
        (key, prefix, body) => {
          expect(hmacSha256Base64(hmacKey(Buffer.from(key)), prefix, body)).toBe(
            reference(key, prefix, body),
          );
        },
      ),
    );
  });

  it("gives the same answer on every call with one key, whatever came before", () => {
    const key = hmacKey(Buffer.alloc(32, 7));
    const bodies = [
      Buffer.alloc(0),
      Buffer.alloc(10, 1),
      Buffer.alloc(5000, 2), // grows the shared buffer
      Buffer.alloc(64 * 1024, 3), // beyond it: streamed through createHmac
      Buffer.alloc(10, 1),
    ];
    for (const body of bodies) {
      expect(hmacSha256Base64(key, "msg_1.1614265330.", body)).toBe(
        reference(Buffer.alloc(32, 7), "msg_1.1614265330.", body),
      );
    }
  });

  it("matches RFC 4231 test case 2 and case 6 (a key longer than a block)", () => {
    const two = hmacKey(Buffer.from("Jefe"));
    expect(
      Buffer.from(hmacSha256Base64(two, "", Buffer.from("what do ya want for nothing?")), "base64").toString(
        "hex",
      ),
    ).toBe("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    const six = hmacKey(Buffer.alloc(131, 0xaa));
    expect(
      Buffer.from(
        hmacSha256Base64(six, "Test Using Larger Than Block-Size Key - Hash Key First", new Uint8Array()),
        "base64",
      ).toString("hex"),
    ).toBe("60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  });
});
