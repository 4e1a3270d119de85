// The UTF-8 reader decodes long texts run by run (ASCII runs as Latin-1, the rest strictly). It
// must say exactly what one strict TextDecoder says of the whole: the same text, or "not UTF-8".
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { utf8Text } from "../src/canonical/utf8.js";

const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const reference = (bytes: Uint8Array): string | undefined => {
  try {
    return strict.decode(bytes);
  } catch {
    return undefined;
  }
};

// Long ASCII stretches with a few other characters or stray bytes at any place, over block edges.
const piece = fc.oneof(
  fc.string({ unit: "binary-ascii", maxLength: 1500 }).map((text) => Buffer.from(text, "latin1")),
  fc.string({ unit: "grapheme", maxLength: 40 }).map((text) => Buffer.from(text, "utf8")),
  fc.uint8Array({ minLength: 1, maxLength: 6 }),
  fc.constantFrom(
    Buffer.from([0xef, 0xbb, 0xbf]), // a byte order mark, kept
    Buffer.from([0xc3]), // a cut two-byte character
    Buffer.from([0x80, 0x80, 0x80, 0x80, 0x80]), // continuation bytes only
    Buffer.from([0xed, 0xa0, 0x80]), // a surrogate, not UTF-8
  ),
);
const texts = fc.array(piece, { maxLength: 12 }).map((pieces) => new Uint8Array(Buffer.concat(pieces)));

describe("utf8Text reads long texts run by run", () => {
  it("agrees with one strict decoder on any bytes", () => {
    fc.assert(
      fc.property(texts, (bytes) => {
        expect(utf8Text(bytes)).toBe(reference(bytes));
      }),
      { numRuns: 500 },
    );
  });

  it("reads a view into a larger buffer by its own bytes only", () => {
    const text = `${"a".repeat(3000)}×${"b".repeat(2000)}`;
    const inner = Buffer.from(text, "utf8");
    const framed = Buffer.concat([Buffer.from([0xff]), inner, Buffer.from([0xff])]);
    expect(utf8Text(framed.subarray(1, framed.length - 1))).toBe(text);
    expect(utf8Text(framed)).toBeUndefined();
  });

  it("refuses a character cut at the end and a stray byte deep in a long text", () => {
    const long = Buffer.from(`${"x".repeat(5000)}é`, "utf8");
    expect(utf8Text(long.subarray(0, long.length - 1))).toBeUndefined();
    const stray = Buffer.from("y".repeat(5000), "latin1");
    stray[4096] = 0xbf;
    expect(utf8Text(stray)).toBeUndefined();
  });
});
