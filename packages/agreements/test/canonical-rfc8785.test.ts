// RFC 8785 (JCS): the canonical form everything is hashed and signed over. Vectors from the RFC's
// Appendix B and the RFC author's test data (vectors/canonical.json names each source).
import { describe, expect, it } from "vitest";
import { canonicalBytes, canonicalHash, canonicalJson, isAgreementError, parseJson } from "../src/index.js";
import { readVector } from "./support.js";

interface CanonicalVectors {
  vectors: { name: string; input: string; output: string }[];
  numbers: [string, string][];
  numbers_refused: string[];
  refused: { name: string; input: string }[];
  accepted_pairs: { name: string; input: string; output: string }[];
}
const v = readVector<CanonicalVectors>("canonical.json");
const double = (hex: string): number => Buffer.from(hex, "hex").readDoubleBE(0);

describe("canonical form (RFC 8785)", () => {
  it.each(v.vectors)(
    "$name: sorts by UTF-16 code units, escapes as JSON.stringify, never normalises",
    ({ input, output }) => {
      expect(canonicalJson(JSON.parse(input))).toBe(output);
    },
  );

  it.each(v.numbers)("number %s is serialised as %s (Appendix B)", (hex, expected) => {
    expect(canonicalJson(double(hex))).toBe(expected);
  });

  it.each(v.numbers_refused)("NaN and Infinity (%s) have no canonical form", (hex) => {
    expect(() => canonicalJson(double(hex))).toThrow(
      expect.objectContaining({ code: "ERR_CANONICAL_INPUT" }),
    );
  });

  it.each(v.refused)("refuses a $name instead of replacing it", ({ input }) => {
    expect(() => canonicalJson(JSON.parse(input))).toThrow(/lone surrogate/);
  });

  it.each(v.accepted_pairs)("keeps a $name as UTF-8", ({ input, output }) => {
    expect(canonicalJson(JSON.parse(input))).toBe(output);
  });

  it("refuses values JSON cannot carry rather than dropping them", () => {
    for (const value of [
      { a: undefined },
      { d: new Date(0) },
      Object.assign(new Array(3), { 0: 1, 2: 3 }),
      { f: () => 1 },
      { b: 10n },
    ]) {
      expect(() => canonicalJson(value)).toThrow(expect.objectContaining({ code: "ERR_CANONICAL_INPUT" }));
    }
  });

  it("hashes the UTF-8 bytes of the canonical form as lowercase hex SHA-256", () => {
    expect(new TextDecoder().decode(canonicalBytes({ b: "é", a: 1 }))).toBe('{"a":1,"b":"é"}');
    // SHA-256 of the 15 bytes {"a":1,"b":"é"}, computed independently with sha256sum.
    expect(canonicalHash({ b: "é", a: 1 })).toBe(
      "09ad9fd2fb648cb2f62141215828ea00a62c299db05d20aa9ade2f527a301cc6",
    );
  });
});

describe("strict JSON parsing", () => {
  it("refuses a member twice in one object, at any depth", () => {
    expect(() => parseJson('{"a":1,"a":2}')).toThrow(
      expect.objectContaining({ code: "ERR_JSON_DUPLICATE_MEMBER" }),
    );
    expect(() => parseJson('{"x":{"b":[{"c":1,"c":1}]}}')).toThrow(/"c" twice/);
    expect(parseJson('{"a":{"a":1},"b":["a","a"]}')).toEqual({ a: { a: 1 }, b: ["a", "a"] });
  });

  it("treats escaped names as the names they spell", () => {
    expect(() => parseJson('{"a":1,"\\u0061":2}')).toThrow(
      expect.objectContaining({ code: "ERR_JSON_DUPLICATE_MEMBER" }),
    );
  });

  it("refuses invalid UTF-8 and a byte order mark", () => {
    expect(() => parseJson(new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]))).toThrow(
      /not valid UTF-8/,
    );
    expect(() => parseJson("\uFEFF{}")).toThrow(/byte order mark/);
    try {
      parseJson("{");
    } catch (error) {
      expect(isAgreementError(error) && error.code).toBe("ERR_JSON_INVALID");
    }
  });
});
