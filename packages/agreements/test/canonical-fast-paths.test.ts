// The short ways taken for speed (issue 18) must give exactly what the long ways give:
// - canonicalJson lets JSON.stringify write a value whose members are in order (or a copy put in
//   order), checked against `canonicalize`, an independent RFC 8785 implementation;
// - parseJson proves "no duplicate member" by counting colons, checked against texts with a
//   member repeated at any depth, with colons in names and values, and with escaped colons;
// - a signed payload that already is a canonical message is read without a projection, and
//   anything else still goes the long way to be refused for the precise reason.
import canonicalize from "canonicalize";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sameJsonData } from "../src/canonical/same.js";
import { canonicalJson, parseJson, readSignedMessage, signMessage } from "../src/index.js";
import { parseCanonicalPayload, parseMessage } from "../src/message/parse.js";
import { jkuOf, readVector, SELLER, testKey } from "./support.js";

/** The value with every object's members inserted in reverse order (same data, other order). */
const reversed = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(reversed);
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const name of Object.keys(value).reverse()) {
    Object.defineProperty(out, name, {
      value: reversed((value as Record<string, unknown>)[name]),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
};

const sortedCopy = (value: unknown): unknown => JSON.parse(canonicalize(value) as string);

describe("canonicalJson's short ways agree with an independent RFC 8785 implementation", () => {
  it("for any JSON value, in its own order, reversed, and already sorted", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const expected = canonicalize(value);
        expect(canonicalJson(value)).toBe(expected);
        expect(canonicalJson(reversed(value))).toBe(expected);
        expect(canonicalJson(sortedCopy(value))).toBe(expected);
      }),
      { numRuns: 500 },
    );
  });

  it("for names JavaScript orders by itself (array indexes) and a member named __proto__", () => {
    for (const text of [
      '{"b":1,"10":2,"9":3,"a":{"2":0,"1":0}}',
      '{"z":[{"y":1,"x":2}],"1a":0,"0":0}',
      '{"__proto__":{"b":1,"a":2},"a":0}',
      '{"a":{"__proto__":1,"c":2,"b":3}}',
      '{"\\u00e9":1,"e":2,"\\ud83d\\ude00":3,"\\uffff":4}',
    ]) {
      const value = JSON.parse(text) as unknown;
      expect(canonicalJson(value)).toBe(canonicalize(value));
      expect(canonicalJson(reversed(value))).toBe(canonicalize(value));
    }
  });

  it("leaves the value it is given as it was", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const before = JSON.stringify(value);
        canonicalJson(reversed(value));
        canonicalJson(value);
        expect(JSON.stringify(value)).toBe(before);
      }),
      { numRuns: 200 },
    );
  });

  it("still refuses what has no canonical form, in order or not", () => {
    for (const value of [
      { a: 1, b: "\ud800" },
      { b: "\ud800", a: 1 },
      { a: Object.assign(new Array(3), { 0: 1, 2: 3 }) },
      { a: Number.NaN },
    ]) {
      expect(() => canonicalJson(value)).toThrow(expect.objectContaining({ code: "ERR_CANONICAL_INPUT" }));
    }
    const withToJson = [1, 2];
    Object.defineProperty(withToJson, "toJSON", { value: () => "changed", enumerable: false });
    expect(canonicalJson(withToJson)).toBe("[1,2]");
  });
});

/** JSON text of an object with member `name` written twice at the object `path` leads to. */
const withDuplicate = (value: Record<string, unknown>, name: string, extra: unknown): string => {
  const text = JSON.stringify(value);
  return `${text.slice(0, -1)}${text.length > 2 ? "," : ""}${JSON.stringify(name)}:${JSON.stringify(extra)}}`;
};

describe("sameJsonData says what comparing canonical forms says", () => {
  it("for any two JSON values, a value and itself reordered, and near misses", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
        const same = (x: unknown, y: unknown) => canonicalize(x) === canonicalize(y);
        expect(sameJsonData(a, b)).toBe(same(a, b));
        expect(sameJsonData(a, reversed(a))).toBe(true);
        expect(sameJsonData(a, sortedCopy(a))).toBe(true);
        expect(sameJsonData({ v: a }, { v: a, extra: null })).toBe(false);
        expect(sameJsonData([a], [a, a])).toBe(false);
      }),
      { numRuns: 500 },
    );
  });

  it("tells an array from an object with the same entries, and takes -0 as 0", () => {
    expect(sameJsonData([1, 2], { 0: 1, 1: 2 })).toBe(false);
    expect(sameJsonData({ 0: 1, 1: 2 }, [1, 2])).toBe(false);
    expect(sameJsonData({ amount: -0 }, { amount: 0 })).toBe(true);
    expect(sameJsonData({ a: null }, { b: null })).toBe(false);
    expect(sameJsonData("1", 1)).toBe(false);
  });
});

describe("parseJson finds every duplicate member, however the text is written", () => {
  const objects = fc.dictionary(fc.string(), fc.jsonValue(), { minKeys: 1, maxKeys: 6 });

  it("refuses a member repeated at the top or one level down, with colons anywhere", () => {
    fc.assert(
      fc.property(objects, fc.jsonValue(), fc.boolean(), (value, extra, nested) => {
        const name = Object.keys(value)[0] as string;
        const text = nested
          ? `{"outer:x":${withDuplicate(value, name, extra)},"b":"a:b:c"}`
          : withDuplicate(value, name, extra);
        expect(() => parseJson(text)).toThrow(expect.objectContaining({ code: "ERR_JSON_DUPLICATE_MEMBER" }));
      }),
      { numRuns: 300 },
    );
  });

  it("accepts texts without a duplicate, pretty or compact", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        for (const text of [JSON.stringify(value), JSON.stringify(value, null, 2)]) {
          expect(parseJson(text)).toEqual(JSON.parse(text));
        }
      }),
      { numRuns: 300 },
    );
  });

  it("is not fooled by an escaped colon standing in for a lost one", () => {
    // Two members "a"; the kept value carries an escaped colon, so the counts alone would match.
    expect(() => parseJson('{"a":"x","a":"\\u003a"}')).toThrow(
      expect.objectContaining({ code: "ERR_JSON_DUPLICATE_MEMBER" }),
    );
    expect(() => parseJson('{"a":"x","b":{"a:":1,"a:":"\\u003A"}}')).toThrow(
      expect.objectContaining({ code: "ERR_JSON_DUPLICATE_MEMBER" }),
    );
    expect(parseJson('{"a":"\\u003a","b:":":"}')).toEqual({ a: ":", "b:": ":" });
  });

  it("refuses invalid UTF-8 and keeps a real U+FFFD", () => {
    expect(() => parseJson(new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]))).toThrow(
      /not valid UTF-8/,
    );
    expect(parseJson(Buffer.from('{"a":"\ufffd"}', "utf8"))).toEqual({ a: "\ufffd" });
  });
});

describe("a signed payload read the short way", () => {
  const quote = readVector<{ valid: { name: string; input: unknown }[] }>("messages.json").valid.find(
    (entry) => entry.name === "quote without an ask",
  )?.input as Record<string, unknown>;

  it("gives what the long way gives for a canonical payload", async () => {
    const signed = await signMessage(quote, await testKey("seller"), { jku: jkuOf(SELLER.party) });
    const short = parseCanonicalPayload(signed.parsed.bytes);
    const long = parseMessage(signed.parsed.bytes);
    expect(short).toBeDefined();
    expect(short?.message).toEqual(long.message);
    expect(short?.canonical).toBe(long.canonical);
    expect(short?.hash).toBe(long.hash);
    expect(readSignedMessage(signed.jws).parsed.hash).toBe(long.hash);
  });

  it("declines every payload that is not exactly a canonical message, leaving the refusal to the long way", () => {
    const canonical = parseMessage(JSON.stringify(quote)).canonical;
    const variants = [
      canonical.replace('{"@context"', '{"zz":1,"@context"'), // an unknown member
      JSON.stringify(reversed(JSON.parse(canonical))), // members out of order
      canonical.replace(":", ": "), // whitespace
      canonical.replace('"quote"', '"\\u0071uote"'), // an escape RFC 8785 does not write
      canonical.replace(/"iat":(\d+)/, '"iat":$1.0'), // a number in another spelling
      canonical.replace('"from":{', '"from":{"address":"x@y.example",'), // a duplicate member
      `\ufeff${canonical}`, // a byte order mark
    ];
    for (const text of variants) {
      expect(text).not.toBe(canonical);
      expect(parseCanonicalPayload(Buffer.from(text, "utf8"))).toBeUndefined();
    }
    expect(parseCanonicalPayload(Buffer.from(canonical, "utf8"))).toBeDefined();
  });
});
