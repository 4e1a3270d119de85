/**
 * JSON Schema that every MCP client reads alike. zod writes a union of plain types as a type array
 * (`type: ["string", "number"]`), which MCP Inspector flags as not portable, and a calendar date
 * as `format: "date"` beside its exact `pattern`, on which some validators (Mastra's) warn. Here a
 * type array becomes an `anyOf` of single types, and a date keeps only its pattern: the values
 * each schema accepts stay the same (the type-specific keywords beside a type array apply to their
 * own type only, and the pattern already admits exactly the calendar dates).
 */

type Json = unknown;
type JsonObject = Record<string, Json>;

/** Keywords whose values are data, not schemas: left exactly as they are. */
const DATA_KEYWORDS = new Set(["const", "enum", "default", "examples"]);

const isObject = (value: Json): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The same schema, rewritten where a client might read it differently; the input is not changed. */
export function portableJsonSchema<T>(schema: T): T {
  return portable(schema) as T;
}

function portable(value: Json): Json {
  if (Array.isArray(value)) return value.map(portable);
  if (!isObject(value)) return value;
  const node: JsonObject = {};
  for (const [key, member] of Object.entries(value))
    node[key] = DATA_KEYWORDS.has(key) ? member : portable(member);
  return singleTyped(withoutDateFormat(node));
}

/** `format: "date"` goes only where a pattern already says exactly what it says. */
function withoutDateFormat(node: JsonObject): JsonObject {
  if (node.format !== "date" || typeof node.pattern !== "string") return node;
  const { format: _format, ...rest } = node;
  return rest;
}

/** `type: [a, b]` becomes `anyOf: [{ type: a }, { type: b }]` (within any `anyOf` already there). */
function singleTyped(node: JsonObject): JsonObject {
  if (!Array.isArray(node.type)) return node;
  const { type, ...rest } = node;
  const types = type as string[];
  if (types.length === 1) return { ...rest, type: types[0] };
  const alternatives = types.map((one) => ({ type: one }));
  if (rest.anyOf === undefined) return { ...rest, anyOf: alternatives };
  return { ...rest, allOf: [...((rest.allOf as Json[] | undefined) ?? []), { anyOf: alternatives }] };
}
