import { createHash } from "node:crypto";
import type { JsonObject } from "../protocol/model.js";

/**
 * The store key of a logical subscription: the same event name and params (in any key order)
 * under the same scope are the same subscription, so a restart finds its cursor again.
 */
export function subscriptionKey(scope: string, name: string, params: JsonObject): string {
  return createHash("sha256")
    .update(JSON.stringify([scope, name, canonical(params)]))
    .digest("base64url");
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (typeof value === "object" && value !== null) {
    const record = value as Record<string, unknown>;
    return Object.fromEntries(
      Object.keys(record)
        .sort()
        .filter((key) => record[key] !== undefined)
        .map((key) => [key, canonical(record[key])]),
    );
  }
  return value;
}
