// Every message vector in vectors/messages.json: valid messages parse to the published canonical
// form and hash; unknown members are dropped (and listed); every invalid one is refused with its code.
import { describe, expect, it } from "vitest";
import { parseMessage, parseMessageValue, validateMessage } from "../src/index.js";
import { readVector } from "./support.js";

interface MessageVectors {
  valid: { name: string; input: unknown; canonical: string; hash: string; dropped: string[] }[];
  dropped: { name: string; input: unknown; canonical: string; hash: string; dropped: string[] }[];
  invalid: { name: string; input?: unknown; input_text?: string; code: string }[];
}
const v = readVector<MessageVectors>("messages.json");

describe("message vectors", () => {
  it.each(v.valid)("valid: $name", ({ input, canonical, hash }) => {
    const parsed = parseMessage(JSON.stringify(input));
    expect(parsed.canonical).toBe(canonical);
    expect(parsed.hash).toBe(hash);
    expect(parsed.dropped).toEqual([]);
    expect(validateMessage(input).hash).toBe(hash);
  });

  it.each(v.dropped)("receivers drop unknown members: $name", ({ input, canonical, hash, dropped }) => {
    const parsed = parseMessageValue(input);
    expect(parsed.canonical).toBe(canonical);
    expect(parsed.hash).toBe(hash);
    expect(parsed.dropped).toEqual(dropped);
    expect(dropped.length).toBeGreaterThan(0);
  });

  it.each(v.dropped)("a sender may not send unknown members: $name", ({ input }) => {
    expect(() => validateMessage(input)).toThrow(expect.objectContaining({ code: "ERR_MESSAGE_INVALID" }));
  });

  it.each(v.invalid)("refused ($code): $name", ({ input, input_text, code }) => {
    const text = input_text ?? JSON.stringify(input);
    expect(() => parseMessage(text)).toThrow(expect.objectContaining({ code }));
  });

  it("says what is wrong in plain words, not as a schema path", () => {
    const quote = v.valid.find((x) => x.name === "quote without an ask")?.input as Record<string, unknown>;
    const attempts: [Record<string, unknown>, RegExp][] = [
      [{ ...quote, id: "ABC" }, /the member \/id must be a lowercase UUID/],
      [{ ...quote, total: { amount: "1", currency: "EUX" } }, /\/total\/currency must be one of "AED"/],
      [{ ...quote, note: "x".repeat(2001) }, /the member \/note is longer than 2000 characters/],
      [{ ...quote, exp: quote.iat }, /exp must be later than iat/],
      [{ ...quote, nonce: "short" }, /\/nonce must be 22 characters of unpadded base64url carrying 128 bits/],
    ];
    for (const [input, message] of attempts)
      expect(() => parseMessage(JSON.stringify(input))).toThrow(message);
  });

  it("counts the 32 KB cap in bytes of the part, multi-byte characters included", () => {
    const quote = v.valid.find((x) => x.name === "quote without an ask")?.input as Record<string, unknown>;
    const base = JSON.stringify({ ...quote, x: "" });
    const room = 32 * 1024 - new TextEncoder().encode(base).byteLength;
    expect(() => parseMessage(JSON.stringify({ ...quote, x: "a".repeat(room) }))).not.toThrow();
    expect(() => parseMessage(JSON.stringify({ ...quote, x: "a".repeat(room + 1) }))).toThrow(
      /at most 32,768/,
    );
    expect(() => parseMessage(JSON.stringify({ ...quote, x: "é".repeat(Math.ceil(room / 2) + 1) }))).toThrow(
      expect.objectContaining({ code: "ERR_MESSAGE_TOO_LARGE" }),
    );
  });

  it("returns a copy: changing the input afterwards changes nothing parsed", () => {
    const input = structuredClone(v.valid[0]?.input) as { "@context": string[] };
    const parsed = parseMessageValue(input);
    input["@context"].push("https://evil.example");
    expect(parsed.message["@context"]).toHaveLength(2);
  });
});
