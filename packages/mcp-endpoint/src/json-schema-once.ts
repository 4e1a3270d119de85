/**
 * A tool's schemas converted to JSON Schema once per process, not once per request.
 *
 * The SDK converts a tool's input and output schemas (`~standard.jsonSchema`) on the server the
 * tool is registered on, and remembers the result on that server only. The modern endpoint builds
 * a server per request, so every call converted its tool's schemas again: 11 % of a serve
 * process's CPU in the soak. A schema's conversion never changes, so each schema here answers
 * from its first conversion for each target, frozen so that no caller can change what the next
 * one reads. The conversion is made portable on the way (`portableJsonSchema`): every client reads
 * the published schemas alike, and validation is still the schema's own.
 */
import { portableJsonSchema } from "./portable-json-schema.js";

type Io = "input" | "output";
type Convert = (options: { target: string }) => Record<string, unknown>;
interface Standard {
  jsonSchema?: Record<Io, Convert>;
}

const done = new WeakSet<object>();

const deepFreeze = <T>(value: T): T => {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const member of Object.values(value)) deepFreeze(member);
  }
  return value;
};

/** The same schema, its JSON Schema conversions remembered (a schema without one is left as it is). */
export function jsonSchemaOnce<S extends object>(schema: S): S {
  if (done.has(schema)) return schema;
  const standard = (schema as { "~standard"?: Standard })["~standard"];
  const convert = standard?.jsonSchema;
  if (standard === undefined || convert === undefined) return schema;
  const made = new Map<string, Record<string, unknown>>();
  const once =
    (io: Io): Convert =>
    (options) => {
      const key = `${io} ${options?.target}`;
      let json = made.get(key);
      if (json === undefined) {
        json = deepFreeze(portableJsonSchema(convert[io](options)));
        made.set(key, json);
      }
      return json;
    };
  Object.defineProperty(schema, "~standard", {
    value: { ...standard, jsonSchema: { input: once("input"), output: once("output") } },
    configurable: true,
  });
  done.add(schema);
  return schema;
}
