import { createHash } from "node:crypto";

/** JSON with object keys sorted at every level: equal params give equal text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record)
      .filter((key) => record[key] !== undefined)
      .sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** A short stable digest of parts (joined unambiguously), for keys and derived ids. */
export function digest(...parts: string[]): string {
  return createHash("sha256").update(JSON.stringify(parts)).digest("base64url");
}
