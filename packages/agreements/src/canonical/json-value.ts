import { AgreementError } from "../errors.js";

/** A value JSON can carry: what `JSON.parse` returns, and nothing else. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [member: string]: JsonValue };

const where = (path: string): string => (path === "" ? "the value" : `the member at ${path}`);

const isPlainObject = (value: object): boolean => {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
};

/**
 * Refuses anything `JSON.parse` could not have produced: undefined, functions, symbols, BigInt,
 * class instances (Date, Map, objects with `toJSON`), non-finite numbers and sparse arrays. The
 * canonical form is defined for JSON data only; a library would silently drop or convert these.
 */
export const assertJsonValue = (value: unknown, path = ""): JsonValue => {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      if (!Number.isFinite(value)) {
        throw new AgreementError("ERR_CANONICAL_INPUT", `${where(path)} is not a finite number`);
      }
      return value;
    case "object": {
      if (value === null) return null;
      if (Array.isArray(value)) {
        for (let index = 0; index < value.length; index++) {
          if (!(index in value)) {
            throw new AgreementError(
              "ERR_CANONICAL_INPUT",
              `${where(`${path}/${index}`)} is a hole in an array`,
            );
          }
          assertJsonValue(value[index], `${path}/${index}`);
        }
        return value as JsonValue;
      }
      if (!isPlainObject(value)) {
        throw new AgreementError("ERR_CANONICAL_INPUT", `${where(path)} is not a plain JSON object`);
      }
      for (const [name, member] of Object.entries(value)) {
        assertJsonValue(member, `${path}/${name.replaceAll("~", "~0").replaceAll("/", "~1")}`);
      }
      return value as JsonValue;
    }
    default:
      throw new AgreementError(
        "ERR_CANONICAL_INPUT",
        `${where(path)} is ${typeof value}, which JSON cannot carry`,
      );
  }
};
