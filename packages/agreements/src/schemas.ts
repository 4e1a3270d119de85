import { readFileSync } from "node:fs";
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import formats from "ajv-formats";

/** The published schemas, read from the package's `schemas/` folder (beside `src/` and `dist/`). */
const load = (name: string): Record<string, unknown> =>
  JSON.parse(readFileSync(new URL(`../schemas/${name}`, import.meta.url), "utf8")) as Record<string, unknown>;

export const messageSchema = (): Record<string, unknown> => load("message.schema.json");
export const recordSchema = (): Record<string, unknown> => load("record.schema.json");
export const keyPageSchema = (): Record<string, unknown> => load("key-page.schema.json");

// Plain words for each definition, so a refusal says what was expected rather than a regex.
const WORDS: Record<string, string> = {
  uuid: "a lowercase UUID",
  sha256: "a lowercase hex SHA-256 (64 characters)",
  nonce: "22 characters of unpadded base64url carrying 128 bits",
  unixTime: "a whole number of Unix seconds",
  party: "a party id (pty_ and 20 lowercase letters or digits)",
  email: "an e-mail address of at most 254 ASCII characters",
  httpsUrl: "an https address of at most 2,048 characters",
  name: "a single line of 1 to 200 characters",
  token: "a single line of 1 to 64 characters",
  shortText: "text of 1 to 500 characters without control characters",
  note: "text of at most 2,000 characters without control characters",
  date: "a date as YYYY-MM-DD",
  dateTime: "an RFC 3339 date-time with Z or a numeric offset",
  timeZone: "an IANA time zone name",
  jws: "a compact JWS",
  canonical: "canonical JSON text",
};

const at = (path: string): string => (path === "" ? "the document" : `the member ${path}`);

const definitionOf = (schemaPath: string): string | undefined =>
  /#\/\$defs\/([A-Za-z0-9]+)\//.exec(schemaPath)?.[1];

const describe = (error: ErrorObject): string => {
  const where = at(error.instancePath);
  const params = error.params as Record<string, unknown>;
  const definition = definitionOf(error.schemaPath);
  const expected = definition === undefined ? undefined : WORDS[definition];
  switch (error.keyword) {
    case "required":
      return `${at(error.instancePath)} lacks the required member ${JSON.stringify(params.missingProperty)}`;
    case "dependentRequired":
      return `${at(error.instancePath)} has ${JSON.stringify(params.property)} without ${JSON.stringify(params.missingProperty)}`;
    case "additionalProperties":
      return `${where} has the member ${JSON.stringify(params.additionalProperty)}, which this profile does not define`;
    case "const":
      return `${where} must be exactly ${JSON.stringify(params.allowedValue)}`;
    case "enum":
      return `${where} must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ")}`;
    case "pattern":
    case "format":
      return `${where} must be ${expected ?? `a string matching ${String(params.pattern ?? params.format)}`}`;
    case "maxLength":
      return `${where} is longer than ${String(params.limit)} characters`;
    case "minLength":
      return `${where} is shorter than ${String(params.limit)} character${params.limit === 1 ? "" : "s"}`;
    case "maxItems":
      return `${where} has more than ${String(params.limit)} entries`;
    case "minItems":
      return `${where} has fewer than ${String(params.limit)} entr${params.limit === 1 ? "y" : "ies"}`;
    case "type":
      return `${where} must be ${params.type === "integer" ? "a whole number" : `of type ${String(params.type)}`}`;
    case "minimum":
    case "maximum":
      return `${where} must be ${error.keyword === "minimum" ? "at least" : "at most"} ${String(params.limit)}`;
    default:
      return `${where} ${error.message ?? "does not validate"}`;
  }
};

/** Every violation in plain words, most specific first; `if` wrappers are left out. */
export const describeErrors = (errors: readonly ErrorObject[] | null | undefined): string[] => {
  const lines = (errors ?? []).filter((e) => e.keyword !== "if").map(describe);
  return [...new Set(lines)];
};

/**
 * Ajv compiles every pattern with the `u` flag, and a `u` regular expression is several times
 * slower over long strings (a JWS is thousands of characters). For a pattern of printable ASCII
 * with no negated class and no `.` wildcard the flag cannot change what matches (it only changes
 * how surrogate pairs are taken, and such a pattern matches no surrogate either way), so those are
 * compiled without it. Every other pattern keeps `u`.
 */
const asciiOnly = (pattern: string): boolean =>
  /^[\x20-\x7e]*$/.test(pattern) &&
  !pattern.includes("[^") &&
  !/(^|[^\\])\./.test(pattern) &&
  !/\\[pPu]/.test(pattern);
const regExp = Object.assign(
  (pattern: string, flags: string): RegExp =>
    new RegExp(pattern, asciiOnly(pattern) ? flags.replace("u", "") : flags),
  { code: "new RegExp" as const },
);

let ajv: Ajv2020 | undefined;
const compiled = new Map<string, ValidateFunction>();

const compile = <T>(name: string, schema: () => Record<string, unknown>): ValidateFunction<T> => {
  const found = compiled.get(name);
  if (found) return found as ValidateFunction<T>;
  if (!ajv) {
    ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false, code: { regExp } });
    formats.default(ajv, ["date", "date-time", "uri"]);
  }
  const validate = ajv.compile<T>(schema());
  compiled.set(name, validate);
  return validate;
};

/**
 * One Ajv2020 (strict, all errors, formats asserted) shared by the three schemas; each compiled
 * once. The validator is a type guard for `T`, the TypeScript shape its schema describes, so a
 * value that passed needs no cast; the caller names `T` beside the schema it is written from.
 */
export const validatorFor = <T>(name: "message" | "record" | "key-page"): ValidateFunction<T> =>
  compile<T>(name, () => load(`${name}.schema.json`));

/**
 * The record schema without the pattern and length of its JWS strings (the two messages and the
 * seal), for the reader that splits and checks every one of them itself, more strictly, right
 * after (readCompactJws: three parts, base64url in canonical spelling, a tighter length). Over
 * strings of several kilobytes those two keywords cost several times the rest of the schema (a
 * regular expression, and a length counted in code points one by one). A record this passes and
 * the full schema refuses is always refused later, and the reader then reports the full schema's
 * words (see record/read.ts), so what a caller is told does not change.
 */
export const recordValidatorWithoutJwsForm = <T>(): ValidateFunction<T> =>
  compile<T>("record without JWS form", () => {
    const schema = load("record.schema.json");
    const defs = schema.$defs as Record<string, Record<string, unknown>>;
    for (const name of ["jws", "seal"]) {
      const { pattern: _pattern, maxLength: _maxLength, ...rest } = defs[name] as Record<string, unknown>;
      defs[name] = rest;
    }
    // Another $id, so Ajv keeps it beside the published schema.
    schema.$id = `${String(schema.$id)}.without-jws-form`;
    return schema;
  });
