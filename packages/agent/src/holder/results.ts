/**
 * The shapes the agent reads from the holder's structuredContent. Loose objects: a holder may add
 * fields (the binding puts its own under `extensions`, push profile §8.2 adds nextCheckAfter), and
 * an agent must not break on them; what the agent relies on is checked.
 */
import { z } from "zod";
import { AgentError } from "../errors.js";

const instant = z.iso.datetime({ offset: true });
const money = z.looseObject({ amount: z.number(), currency: z.string() });
const area = z.looseObject({ country: z.string(), region: z.string().optional() });

export const intentSchema = z.looseObject({
  id: z.string(),
  status: z.string(),
  statement: z.string(),
  area: area.optional(),
  budget: money.optional(),
  validUntil: z.string().optional(),
});
export type Intent = z.infer<typeof intentSchema>;

export const offerSchema = z.looseObject({
  id: z.string(),
  title: z.string(),
  price: money,
  location: area,
  url: z.string().optional(),
  category: z.string().optional(),
  description: z.string().optional(),
});
export type Offer = z.infer<typeof offerSchema>;

export const matchSchema = z.looseObject({ offer: offerSchema, deliveredAt: instant });
export type Match = z.infer<typeof matchSchema>;

export const listMatchesSchema = z.looseObject({
  matches: z.array(matchSchema),
  /** The holder's additions (binding); a Doorbell holder says `more` there when a page is full. */
  extensions: z.looseObject({ more: z.boolean().optional() }).optional(),
  nextCheckAfter: instant.optional(),
});

/** Whether a call with since = the last deliveredAt has more. */
export function hasMoreMatches(answer: z.infer<typeof listMatchesSchema>): boolean {
  return answer.extensions?.more === true;
}

export const publishSchema = z.looseObject({
  intent: intentSchema,
  intentCode: z.string(),
  consentUrl: z.string(),
});
export type Published = z.infer<typeof publishSchema>;

export const withdrawSchema = z.looseObject({ status: z.literal("withdrawn") });

export const SUBSCRIPTION_STATUSES = [
  "awaiting_verification",
  "awaiting_person_approval",
  "active",
  "ended",
] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

/** Push profile §9: the answer of intent_subscribe_events and intent_unsubscribe_events. */
export const pushSubscriptionSchema = z.looseObject({
  specVersion: z.literal("0.4"),
  type: z.literal("push-subscription"),
  subscriptionId: z.string().min(1).max(200),
  status: z.enum(SUBSCRIPTION_STATUSES),
  approval: z.string().optional(),
  events: z.array(z.string()).optional(),
  expiresAt: instant.optional(),
  refreshBefore: instant.optional(),
  endedReason: z.string().optional(),
});
export type PushSubscription = z.infer<typeof pushSubscriptionSchema>;

/** Parses a tool's structuredContent or says plainly what the holder got wrong. */
export function readResult<S extends z.ZodType>(tool: string, schema: S, value: unknown): z.infer<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue === undefined || issue.path.length === 0 ? "the result" : issue.path.join(".");
  throw new AgentError(
    "ERR_AGENT_PROTOCOL",
    `${tool} answered a result this agent cannot read (${where}: ${issue?.message ?? "invalid"})`,
  );
}
