import { AgreementError } from "../errors.js";
import { assertJsonValue } from "./json-value.js";

const encoder = new TextEncoder();

/** Thrown inside the writer; the caller turns it into a plain-words AgreementError. */
class NotJsonData extends Error {}

const wellFormed = (text: string): boolean => (text as string & { isWellFormed(): boolean }).isWellFormed();

/**
 * One walk that both checks and writes: strings must be well formed (no lone surrogates), numbers
 * finite, objects plain, arrays without holes. JSON.stringify writes strings and numbers exactly
 * as RFC 8785 wants (short escapes for \b \t \n \f \r, lowercase \u00xx for other controls, the
 * ECMAScript number form, -0 as 0); members are sorted by UTF-16 code units (the default sort).
 */
const write = (value: unknown): string => {
  switch (typeof value) {
    case "string":
      if (!wellFormed(value)) throw new NotJsonData("lone surrogate is not allowed");
      return JSON.stringify(value);
    case "number":
      if (!Number.isFinite(value)) throw new NotJsonData("a number is not finite");
      return JSON.stringify(value);
    case "boolean":
      return value ? "true" : "false";
    case "object": {
      if (value === null) return "null";
      if (Array.isArray(value)) {
        let out = "[";
        for (let i = 0; i < value.length; i++) {
          if (!(i in value)) throw new NotJsonData("an array has a hole");
          out += i === 0 ? write(value[i]) : `,${write(value[i])}`;
        }
        return `${out}]`;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) throw new NotJsonData("not a plain JSON object");
      const names = Object.keys(value);
      if (!ascending(names)) names.sort();
      let out = "{";
      for (let i = 0; i < names.length; i++) {
        const name = names[i] as string;
        if (!wellFormed(name)) throw new NotJsonData("lone surrogate is not allowed");
        const member = `${JSON.stringify(name)}:${write((value as Record<string, unknown>)[name])}`;
        out += i === 0 ? member : `,${member}`;
      }
      return `${out}}`;
    }
    default:
      throw new NotJsonData(`${typeof value} is not JSON data`);
  }
};

/** Whether names are in UTF-16 code unit order (`<` on strings compares code units). */
const ascending = (names: readonly string[]): boolean => {
  for (let i = 1; i < names.length; i++) if (!((names[i - 1] as string) < (names[i] as string))) return false;
  return true;
};

/**
 * Adds a member to a plain object (a null-prototype one would be slower for JSON.stringify); a
 * member named __proto__ is defined, since assigning it would set the prototype instead.
 */
const define = (target: Record<string, unknown>, name: string, value: unknown): void => {
  if (name === "__proto__") {
    Object.defineProperty(target, name, { value, enumerable: true, writable: true, configurable: true });
  } else target[name] = value;
};

/** An object whose members cannot be put in order by insertion (see `ordered`). */
const UNORDERABLE = Symbol("unorderable");

const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;

/**
 * A value JSON.stringify writes in canonical form, checked on the way like `write`: the value
 * itself when every object's members already are in UTF-16 order (a parsed canonical document),
 * else a copy in which each object out of order is rebuilt with its members inserted in order
 * (strings are shared, not copied). JSON.stringify then writes the members in that order and
 * strings and numbers exactly as `write` would. An object whose members would need an
 * array-index name (JavaScript lists those first, whatever the insertion order) or an array
 * that is not a plain one gives UNORDERABLE, and `write` does the whole job.
 */
const ordered = (value: unknown): unknown => {
  switch (typeof value) {
    case "string":
      if (!wellFormed(value)) throw new NotJsonData("lone surrogate is not allowed");
      return value;
    case "number":
      if (!Number.isFinite(value)) throw new NotJsonData("a number is not finite");
      return value;
    case "boolean":
      return value;
    case "object": {
      if (value === null) return value;
      if (Array.isArray(value)) {
        if (Object.getPrototypeOf(value) !== Array.prototype || Object.hasOwn(value, "toJSON")) {
          return UNORDERABLE;
        }
        let copy: unknown[] | undefined;
        for (let i = 0; i < value.length; i++) {
          if (!(i in value)) throw new NotJsonData("an array has a hole");
          const entry: unknown = value[i];
          const put = ordered(entry);
          if (put === UNORDERABLE) return UNORDERABLE;
          if (copy === undefined && put !== entry) copy = value.slice(0, i);
          copy?.push(put);
        }
        return copy ?? value;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) throw new NotJsonData("not a plain JSON object");
      const source = value as Record<string, unknown>;
      const names = Object.keys(source);
      const inOrder = ascending(names);
      if (!inOrder) names.sort();
      let copy: Record<string, unknown> | undefined = inOrder ? undefined : {};
      for (let i = 0; i < names.length; i++) {
        const name = names[i] as string;
        if (!wellFormed(name)) throw new NotJsonData("lone surrogate is not allowed");
        const member = source[name];
        const put = ordered(member);
        if (put === UNORDERABLE) return UNORDERABLE;
        if (copy === undefined && put !== member) {
          copy = {};
          for (let j = 0; j < i; j++) define(copy, names[j] as string, source[names[j] as string]);
        }
        if (copy !== undefined) {
          const first = name.charCodeAt(0);
          if (first >= DIGIT_0 && first <= DIGIT_9) return UNORDERABLE;
          define(copy, name, put);
        }
      }
      return copy ?? value;
    }
    default:
      throw new NotJsonData(`${typeof value} is not JSON data`);
  }
};

/**
 * RFC 8785 (JCS): members sorted by UTF-16 code units, numbers as ECMAScript prints them, no
 * whitespace, no Unicode normalisation. Lone surrogates and non-JSON values are refused, never
 * replaced, so two implementations can never sign different bytes for the same value.
 */
export const canonicalJson = (value: unknown): string => {
  try {
    const put = ordered(value);
    return put === UNORDERABLE ? write(value) : (JSON.stringify(put) as string);
  } catch (error) {
    // The slow walk says exactly where the value stops being JSON data.
    if (error instanceof NotJsonData) assertJsonValue(value);
    const reason =
      error instanceof RangeError
        ? "it is nested too deeply"
        : error instanceof Error
          ? error.message
          : String(error);
    throw new AgreementError(
      "ERR_CANONICAL_INPUT",
      `the value has no canonical form: ${reason.toLowerCase()}`,
    );
  }
};

/** The same; kept for callers that know the value is JSON data (the walk checks it anyway). */
export const canonicalJsonOfData = canonicalJson;

/** The UTF-8 bytes of the canonical form: what is hashed and signed. */
export const canonicalBytes = (value: unknown): Uint8Array => encoder.encode(canonicalJson(value));
