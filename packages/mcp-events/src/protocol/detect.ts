import type { DialectName, ErrorCodeProfile, EventsDialect } from "./dialect.js";
import { sep3415, sep3415Dialect } from "./dialects/sep-3415.js";
import { sketch } from "./dialects/sketch.js";

export const DIALECTS: Readonly<Record<DialectName, EventsDialect>> = { sketch, "sep-3415": sep3415 };

/** A dialect by name; SEP-3415's errors numbered by `errorCodes` (the sketch keeps its own). */
export function dialect(name: DialectName, errorCodes: ErrorCodeProfile = "deployed"): EventsDialect {
  return name === "sep-3415" ? sep3415Dialect(errorCodes) : DIALECTS[name];
}

/**
 * The dialect a request's params are written in, when they say: `arguments` is SEP-3415 (and
 * what ChatGPT's webhook-only client sends), `params` or a client-chosen subscribe `id` is the
 * sketch. Undefined when nothing tells (e.g. `{name}` alone): the server's dialect then applies.
 */
export function detectRequestDialect(params: unknown): DialectName | undefined {
  if (typeof params !== "object" || params === null) return undefined;
  const record = params as Record<string, unknown>;
  if ("arguments" in record) return "sep-3415";
  if ("params" in record) return "sketch";
  const delivery = record.delivery as Record<string, unknown> | undefined;
  if (delivery && typeof delivery === "object") {
    if ("id" in record) return "sketch";
    if (typeof delivery.secret === "string" && "name" in record) return "sep-3415";
  }
  return undefined;
}

/**
 * The dialect of a server's answer: `nextPollMs`, `resultType` or `_meta` routing mean SEP-3415.
 * For the client, which learns the server's dialect from its first reply.
 */
export function detectResultDialect(result: unknown): DialectName | undefined {
  if (typeof result !== "object" || result === null) return undefined;
  const record = result as Record<string, unknown>;
  if ("nextPollMs" in record || "resultType" in record || "truncated" in record) return "sep-3415";
  if ("nextPollSeconds" in record || "requestId" in record) return "sketch";
  return undefined;
}
