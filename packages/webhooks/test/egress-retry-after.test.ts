// Retry-After (RFC 9110 §10.2.3) as the delivery engine receives it: whole seconds from now.
import { describe, expect, it } from "vitest";
import { parseRetryAfter } from "../src/egress/index.js";

const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);

describe("parseRetryAfter", () => {
  it.each([
    ["120", 120],
    ["0", 0],
    [" 30 ", 30],
    ["86400", 86400],
    ["Thu, 01 Jan 2026 12:00:30 GMT", 30],
    ["Thursday, 01-Jan-26 12:01:00 GMT", 60],
    ["Thu Jan  1 12:00:10 2026", 10],
    ["Thu, 01 Jan 2026 12:00:00 GMT", 0],
    ["Thu, 01 Jan 2026 11:00:00 GMT", 0], // a date in the past means "now", never negative
  ])("%j → %i", (value, seconds) => {
    expect(parseRetryAfter(value, NOW)).toBe(seconds);
  });

  it("rounds a fractional wait up to the next whole second", () => {
    expect(parseRetryAfter("Thu, 01 Jan 2026 12:00:01 GMT", NOW - 500)).toBe(2);
  });

  it.each([
    undefined,
    "",
    "-1",
    "1.5",
    "soon",
    "1e3",
    "0x10",
    "99999999999999999999",
    "2026-01-01T12:00:30Z",
    "Foo, 01 Jan 2026 12:00:30 GMT",
  ])("ignores %j", (value) => {
    expect(parseRetryAfter(value, NOW)).toBeUndefined();
  });

  it("takes a single header given as an array, and ignores several that may disagree", () => {
    expect(parseRetryAfter(["15"], NOW)).toBe(15);
    expect(parseRetryAfter(["15", "20"], NOW)).toBeUndefined();
    expect(parseRetryAfter([], NOW)).toBeUndefined();
  });
});
