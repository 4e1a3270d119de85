import { z } from "zod";
import { EventsError } from "./errors.js";
import { DELIVERY_ERROR_CATEGORIES } from "./model.js";

/** Zod schemas of the shapes every dialect shares. */

export const jsonObject = z.record(z.string(), z.unknown());
export const requestId = z.union([z.string(), z.number().int()]);
export const nonEmpty = z.string().min(1);
export const isoTimestamp = z.iso.datetime({ offset: true });
/** Absent and `null` mean the same: start from now. */
export const cursorParam = z.string().nullable().optional();

export const eventOccurrence = z.object({
  eventId: nonEmpty,
  name: nonEmpty,
  timestamp: isoTimestamp,
  data: jsonObject,
  cursor: z.string().optional(),
});

export const eventDescriptor = z.object({
  name: nonEmpty,
  title: z.string().optional(),
  description: z.string().optional(),
  delivery: z.array(z.enum(["poll", "push", "webhook"])).min(1),
  inputSchema: jsonObject,
  payloadSchema: jsonObject.optional(),
});

export const errorObject = z.object({
  code: z.number().int(),
  message: z.string(),
  data: jsonObject.optional(),
});

export const deliveryStatus = z.object({
  active: z.boolean(),
  // Servers that leave it out before the first delivery (mcp-handler's schema has no null) mean null.
  lastDeliveryAt: isoTimestamp.nullable().default(null),
  lastError: z.string().nullable(),
  failedSince: isoTimestamp.optional(),
});
export const DELIVERY_ERROR_CATEGORY = z.enum(DELIVERY_ERROR_CATEGORIES as [string, ...string[]]);

export const listParams = z.object({ cursor: z.string().optional() }).optional();

/**
 * Parses `value` with `schema`; a mismatch becomes `InvalidParams` whose data names each field
 * that failed and why (never the rejected value, which may be a secret).
 */
export function parseOrInvalid<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw invalidParams(
    what,
    parsed.error.issues.map((issue) => ({
      path: issue.path.map(String).join(".") || "(root)",
      message: issue.message,
    })),
  );
}

/** One field that failed validation: its dotted path ("(root)" for the whole value) and why. */
export interface FieldIssue {
  path: string;
  message: string;
}

/** `InvalidParams` whose message names the first failing field and whose data lists them all. */
export function invalidParams(what: string, issues: FieldIssue[]): EventsError {
  const first = issues[0];
  return new EventsError(
    "InvalidParams",
    { issues },
    `Invalid ${what}${first ? `: ${first.path}: ${first.message}` : ""}`,
  );
}

/**
 * The object without its keys whose value is undefined, so encoded wire objects carry no
 * `"x": undefined`. A copy (when anything is dropped) rather than `delete`, which would leave
 * a slow dictionary-mode object on every request's path.
 */
export function compact<T extends Record<string, unknown>>(value: T): T {
  let dropped = false;
  for (const key in value)
    if (value[key] === undefined) {
      dropped = true;
      break;
    }
  if (!dropped) return value;
  const kept: Record<string, unknown> = {};
  for (const key in value) if (value[key] !== undefined) kept[key] = value[key];
  return kept as T;
}
