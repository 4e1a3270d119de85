import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { constantTimeEqual } from "../src/constant-time.js";

describe("constantTimeEqual", () => {
  it("agrees with === for every pair of strings, at any offset", () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.string(), (expected, prefix, other) => {
        expect(constantTimeEqual(expected, prefix + expected, prefix.length)).toBe(true);
        expect(constantTimeEqual(expected, prefix + other, prefix.length)).toBe(expected === other);
      }),
    );
  });

  it("compares only the given length", () => {
    expect(constantTimeEqual("abc", "v1,abc tail", 3, 3)).toBe(true);
    expect(constantTimeEqual("abc", "v1,abd tail", 3, 3)).toBe(false);
    expect(constantTimeEqual("abc", "v1,abc", 3, 2)).toBe(false);
  });
});
