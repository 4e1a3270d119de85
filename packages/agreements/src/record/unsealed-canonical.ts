import { canonicalJson } from "../canonical/canonicalize.js";
import type { AgreementRecord } from "./types.js";

const wellFormed = (text: string): boolean => (text as string & { isWellFormed(): boolean }).isWellFormed();

/** Whether names are in UTF-16 code unit order. */
const ascending = (names: readonly string[]): boolean => {
  for (let i = 1; i < names.length; i++) if (!((names[i - 1] as string) < (names[i] as string))) return false;
  return true;
};

const sortedNames = (value: object, leaving?: string): string[] => {
  const names = Object.keys(value).filter((name) => name !== leaving);
  if (!ascending(names)) names.sort();
  return names;
};

const member = (name: string, text: string): string => {
  if (!wellFormed(name)) throw new RangeError("a member name is not well formed");
  return `${JSON.stringify(name)}:${text}`;
};

/** A recorded message ({jws, hash, …}) with its JWS, already read and checked, put in as it is. */
const recordedMessage = (value: unknown, jws: string | undefined): string => {
  if (jws === undefined || value === null || typeof value !== "object" || Array.isArray(value)) {
    return canonicalJson(value);
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return canonicalJson(value);
  const source = value as Record<string, unknown>;
  const parts = sortedNames(source).map((name) =>
    member(name, name === "jws" && source[name] === jws ? `"${jws}"` : canonicalJson(source[name])),
  );
  return `{${parts.join(",")}}`;
};

/**
 * The canonical text of a record without its seal: exactly `canonicalJson` of the record less its
 * `seal` member, which is what the seal signs. The JWS of the offer and of the acceptance are most
 * of a record, and each was read and checked before this (three parts of base64url and two dots:
 * characters JSON writes as they are), so they are put in as they are instead of being scanned
 * again by JSON.stringify, which takes several nanoseconds a character. Any value the short way
 * cannot write is written by `canonicalJson` of the whole, which refuses it in its own words.
 */
export const unsealedCanonical = (
  record: AgreementRecord,
  checkedJws: { readonly offer?: string; readonly acceptance?: string },
): string => {
  const source: object = record;
  try {
    const parts = sortedNames(source, "seal").map((name) => {
      const value = (source as Readonly<Record<string, unknown>>)[name];
      if (name === "offer") return member(name, recordedMessage(value, checkedJws.offer));
      if (name === "acceptance") return member(name, recordedMessage(value, checkedJws.acceptance));
      return member(name, canonicalJson(value));
    });
    return `{${parts.join(",")}}`;
  } catch {
    const { seal: _seal, ...rest } = record;
    return canonicalJson(rest);
  }
};
