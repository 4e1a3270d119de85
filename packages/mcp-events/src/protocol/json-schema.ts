import { fromJsonSchema, type JsonSchemaType } from "@modelcontextprotocol/server";
import type { FieldIssue } from "./common.js";
import type { JsonObject } from "./model.js";

/**
 * Plain JSON Schema checks, with the failures as field issues (the shape zod failures get in
 * `parseOrInvalid`). The validator is the SDK's own, the one it checks tools' JSON Schemas with
 * (Ajv, by the schema's declared dialect, 2020-12 when it declares none), so nothing else loads.
 */
export type JsonSchemaCheck = (value: unknown) => FieldIssue[] | undefined;

/**
 * Compiles `schema` once; the returned check answers undefined for a value that conforms. Throws
 * when the validator cannot compile it (an unknown `$schema` dialect, a broken pattern).
 */
export function compileJsonSchema(schema: JsonObject): JsonSchemaCheck {
  const standard = fromJsonSchema(schema as JsonSchemaType)["~standard"];
  return (value) => {
    const result = standard.validate(value);
    // The SDK's JSON Schema validators answer synchronously.
    if (result instanceof Promise || !result.issues) return undefined;
    return result.issues.flatMap((issue) => issuesOf(issue.message, schema, value));
  };
}

/**
 * Ajv's text (`data/folder must be string, data must have required property 'x'`) as one issue
 * per failure, each naming its field. A text in another shape (another validator) stays one issue
 * at the root.
 */
function issuesOf(text: string, schema: JsonObject, value: unknown): FieldIssue[] {
  const issues: FieldIssue[] = [];
  for (const part of text.split(/, (?=data[/ ])/)) {
    const match = /^data((?:\/[^ ]*)?) (.+)$/s.exec(part);
    if (!match) return [{ path: "(root)", message: text }];
    const segments = (match[1] as string)
      .split("/")
      .slice(1)
      .map((segment) => segment.replaceAll("~1", "/").replaceAll("~0", "~"));
    const message = match[2] as string;
    const missing = /^must have required property '(.+)'$/.exec(message)?.[1];
    if (missing !== undefined) {
      issues.push({ path: pathOf([...segments, missing]), message: "is required" });
      continue;
    }
    const extra =
      message === "must NOT have additional properties" ? unknownKeys(schema, value, segments) : [];
    if (extra.length > 0) {
      for (const key of extra)
        issues.push({ path: pathOf([...segments, key]), message: "is not a property the schema allows" });
      continue;
    }
    issues.push({ path: pathOf(segments), message });
  }
  return issues;
}

const pathOf = (segments: string[]): string => (segments.length === 0 ? "(root)" : segments.join("."));

/**
 * The keys of the object at `segments` that its schema does not name, so an additionalProperties
 * failure says which ones; empty where the schema is not plainly nested (a `$ref`, a combinator).
 */
function unknownKeys(schema: JsonObject, value: unknown, segments: string[]): string[] {
  let node: unknown = schema;
  let at: unknown = value;
  for (const segment of segments) {
    node = (node as { properties?: Record<string, unknown> } | undefined)?.properties?.[segment];
    at = (at as Record<string, unknown> | undefined)?.[segment];
  }
  if (typeof node !== "object" || node === null || typeof at !== "object" || at === null) return [];
  const { properties = {}, patternProperties = {} } = node as {
    properties?: Record<string, unknown>;
    patternProperties?: Record<string, unknown>;
  };
  const patterns = Object.keys(patternProperties).flatMap((source) => {
    try {
      return [new RegExp(source, "u")];
    } catch {
      return [];
    }
  });
  return Object.keys(at).filter(
    (key) => !Object.hasOwn(properties, key) && !patterns.some((pattern) => pattern.test(key)),
  );
}
