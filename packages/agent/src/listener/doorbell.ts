/**
 * Push profile §5: a doorbell body is `{ specVersion, type, timestamp, data }` and `data` has exactly
 * the fields of its event type (§5.3: "a doorbell, not a letter"). Anything else is refused with
 * words that name the field, so a holder's or forwarder's developer sees what to remove.
 */
import { z } from "zod";
import { AgentError } from "../errors.js";

const instant = z.iso.datetime({ offset: true });
const subscriptionId = z.string().min(1).max(200);
const word = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .regex(/^[a-z][a-z0-9_-]*$/, "lower-case letters, digits, - and _ only");

const DATA = {
  "intent.matches.delivered": z.strictObject({
    subscriptionId,
    newMatches: z.int().min(1).max(1_000_000),
    latestDeliveredAt: instant,
  }),
  "intent.status.changed": z.strictObject({ subscriptionId, status: word(40) }),
  "subscription.verification": z.strictObject({ subscriptionId, challenge: z.string().min(1).max(512) }),
  "subscription.ended": z.strictObject({ subscriptionId, reason: word(60) }),
} as const;

export type DoorbellType = keyof typeof DATA;
export const DOORBELL_TYPES = Object.keys(DATA) as DoorbellType[];

export type Doorbell = {
  [T in DoorbellType]: { type: T; timestamp: string; data: z.infer<(typeof DATA)[T]> };
}[DoorbellType];

const FIELDS: Record<DoorbellType, string> = {
  "intent.matches.delivered": "subscriptionId, newMatches, latestDeliveredAt",
  "intent.status.changed": "subscriptionId, status",
  "subscription.verification": "subscriptionId, challenge",
  "subscription.ended": "subscriptionId, reason",
};

const envelope = z.strictObject({
  specVersion: z.literal("0.4"),
  type: z.string(),
  timestamp: instant,
  data: z.record(z.string(), z.unknown()),
});

const refuse = (message: string) => new AgentError("ERR_AGENT_DOORBELL_INVALID", message);

export function parseDoorbell(json: unknown): Doorbell {
  const outer = envelope.safeParse(json);
  if (!outer.success)
    throw refuse(`the doorbell body is not a push profile 0.4 notification: ${describe(outer.error)}`);
  const { type, timestamp, data } = outer.data;
  if (!(type in DATA)) {
    throw refuse(
      `unknown doorbell type ${JSON.stringify(type.slice(0, 60))}; push profile 0.4 has ${DOORBELL_TYPES.join(", ")}`,
    );
  }
  const known = type as DoorbellType;
  const inner = DATA[known].safeParse(data);
  if (!inner.success) {
    const extra = inner.error.issues.find((issue) => issue.code === "unrecognized_keys");
    if (extra !== undefined && "keys" in extra) {
      const names = (extra.keys as string[]).slice(0, 5).map((key) => JSON.stringify(key.slice(0, 40)));
      throw refuse(
        `the doorbell's data carries undeclared field ${names.join(", ")}: a ${known} doorbell has exactly ${FIELDS[known]} ` +
          "(push profile §5.3: no offer, URL, price, title, contact or code)",
      );
    }
    throw refuse(`the ${known} doorbell's data is not valid: ${describe(inner.error)}`);
  }
  return { type: known, timestamp, data: inner.data } as Doorbell;
}

function describe(error: z.ZodError): string {
  const issue = error.issues[0];
  if (issue === undefined) return "invalid";
  if (issue.code === "unrecognized_keys") {
    return `undeclared field ${issue.keys.map((key) => JSON.stringify(key.slice(0, 40))).join(", ")} (a notification is specVersion, type, timestamp and data only)`;
  }
  const where = issue.path.length === 0 ? "the body" : issue.path.join(".");
  return `${where}: ${issue.message}`;
}
