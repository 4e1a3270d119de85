import { AgreementError } from "../errors.js";
import type { JsonValue } from "./json-value.js";
import { utf8Text } from "./utf8.js";

/** Index of the closing quote of the string literal that opens at `start` (the text is valid JSON). */
const endOfString = (text: string, start: number): number => {
  // indexOf runs in native code: long strings (a JWS, a note) are skipped in one call each.
  for (let quote = text.indexOf('"', start + 1); quote >= 0; quote = text.indexOf('"', quote + 1)) {
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === 0x5c) backslashes++;
    if (backslashes % 2 === 0) return quote;
  }
  return text.length;
};

/**
 * JSON.parse keeps the last of two members with the same name; other parsers keep the first, so
 * a duplicate lets two readers see two different messages. Walks text JSON.parse already accepted.
 */
const findDuplicateMember = (text: string): string | undefined => {
  const stack: ({ names: Set<string>; expectName: boolean } | null)[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const end = endOfString(text, i);
      const top = stack.at(-1);
      if (top?.expectName) {
        const raw = text.slice(i + 1, end);
        // Only a name with an escape needs decoding to compare ("a" and "\u0061" are one name).
        const name = raw.includes("\\") ? (JSON.parse(`"${raw}"`) as string) : raw;
        if (top.names.has(name)) return name;
        top.names.add(name);
        top.expectName = false;
      }
      i = end;
    } else if (c === 0x7b) stack.push({ names: new Set(), expectName: true });
    else if (c === 0x5b) stack.push(null);
    else if (c === 0x7d || c === 0x5d) stack.pop();
    else if (c === 0x2c) {
      const top = stack.at(-1);
      if (top) top.expectName = true;
    }
  }
  return undefined;
};

/** How many times `char` occurs in `text` (indexOf runs in native code). */
const occurrences = (text: string, char: string): number => {
  let count = 0;
  for (let at = text.indexOf(char); at >= 0; at = text.indexOf(char, at + 1)) count++;
  return count;
};

/** Members and the colons inside strings (names and values) of a parsed value. */
const countMembers = (value: JsonValue, tally: { members: number; colons: number }): void => {
  if (typeof value === "string") {
    tally.colons += occurrences(value, ":");
    return;
  }
  if (value === null || typeof value !== "object") return;
  if (Array.isArray(value)) {
    for (const entry of value) countMembers(entry, tally);
    return;
  }
  for (const name of Object.keys(value)) {
    tally.members++;
    tally.colons += occurrences(name, ":");
    countMembers(value[name] as JsonValue, tally);
  }
};

/**
 * Proves there is no duplicate member without walking the text: every colon in JSON text either
 * ends a member name or is a colon inside a string. A duplicate makes the parsed value lose a
 * member (and perhaps strings), so the text then has more colons than the value has members plus
 * colons in its strings. Only an escaped colon (\u003a) puts a colon in a string without one in
 * the text; with such an escape anywhere, or when the counts differ, the text is walked instead.
 */
const provablyNoDuplicate = (text: string, value: JsonValue): boolean => {
  if (text.includes("\\u003")) return false;
  const tally = { members: 0, colons: 0 };
  countMembers(value, tally);
  return occurrences(text, ":") === tally.members + tally.colons;
};

/**
 * Parses JSON text or UTF-8 bytes strictly: invalid UTF-8, a byte order mark and duplicate member
 * names are refused with the reason, not repaired.
 */
export const parseJson = (input: string | Uint8Array, what = "the document"): JsonValue => {
  let text: string;
  if (typeof input === "string") text = input;
  else {
    const decoded = utf8Text(input);
    if (decoded === undefined) throw new AgreementError("ERR_JSON_INVALID", `${what} is not valid UTF-8`);
    text = decoded;
  }
  if (text.charCodeAt(0) === 0xfeff) {
    throw new AgreementError("ERR_JSON_INVALID", `${what} starts with a byte order mark`);
  }
  let value: JsonValue;
  try {
    value = JSON.parse(text) as JsonValue;
  } catch (error) {
    const reason = error instanceof Error ? error.message : "syntax error";
    throw new AgreementError("ERR_JSON_INVALID", `${what} is not valid JSON (${reason})`);
  }
  const duplicate = provablyNoDuplicate(text, value) ? undefined : findDuplicateMember(text);
  if (duplicate !== undefined) {
    throw new AgreementError(
      "ERR_JSON_DUPLICATE_MEMBER",
      `${what} has the member ${JSON.stringify(duplicate)} twice in one object`,
    );
  }
  return value;
};
