/**
 * The published JSON Schemas of the push profile (schemas/push-*.schema.json) and the check that
 * every doorbell a holder queues fits them: a body that could carry anything beyond §5.2's
 * fields is refused before it is queued, so it is never signed or sent (§5.3).
 */
import fs from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { IntentsError } from "./errors.js";

const schemaFile = (name: string): object =>
  JSON.parse(fs.readFileSync(new URL(`../schemas/${name}`, import.meta.url), "utf8")) as object;

export const NOTIFICATION_SCHEMA = schemaFile("push-notification-0.4.schema.json");
export const SUBSCRIPTION_SCHEMA = schemaFile("push-subscription-0.4.schema.json");

const ajv = new Ajv2020({ allErrors: false, strict: true });
(addFormats as unknown as (ajv: Ajv2020) => void)(ajv);
const validateNotification = ajv.compile(NOTIFICATION_SCHEMA);
const validateSubscription = ajv.compile(SUBSCRIPTION_SCHEMA);

export const PUSH_EVENTS = ["intent.matches.delivered", "intent.status.changed"] as const;
export type PushEvent = (typeof PUSH_EVENTS)[number];

/** Why `body` is not a valid doorbell, or undefined. */
export function notificationProblem(body: unknown): string | undefined {
  if (validateNotification(body)) return undefined;
  const error = validateNotification.errors?.[0];
  return error === undefined ? "invalid" : `${error.instancePath || "body"} ${error.message ?? "is invalid"}`;
}

/** Why `answer` is not a valid push-subscription answer, or undefined. */
export function subscriptionProblem(answer: unknown): string | undefined {
  if (validateSubscription(answer)) return undefined;
  const error = validateSubscription.errors?.[0];
  return error === undefined
    ? "invalid"
    : `${error.instancePath || "answer"} ${error.message ?? "is invalid"}`;
}

/** The doorbell as it will be sent; refused unless it fits the schema. */
export function checkedDoorbell(
  type: string,
  timestamp: string,
  data: Record<string, unknown>,
): { type: string; timestamp: string; data: Record<string, unknown> } {
  const problem = notificationProblem({ specVersion: "0.4", type, timestamp, data });
  if (problem !== undefined) {
    // A programming error, never a user's: the message names the field, never its value.
    throw new IntentsError("ERR_HOLDER_INVALID", `a ${type} doorbell was refused before signing: ${problem}`);
  }
  return { type, timestamp, data };
}
