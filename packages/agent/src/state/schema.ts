/**
 * What the agent keeps between runs, in one document: per watched intent its code, cursor and
 * subscription (with its secrets), and the webhook-ids processed in the last 10 minutes. It holds
 * capabilities (codes, secrets): the file store writes it with mode 0600 and nothing logs it.
 */
import { z } from "zod";

const secretEntry = z.object({
  secret: z.string(),
  /** Epoch ms after which doorbells signed with it are no longer accepted; none: the current secret. */
  until: z.number().optional(),
});

export const localSubscriptionSchema = z.object({
  /** Random path segment of this subscription's endpoint (chosen before the holder names it). */
  localId: z.string(),
  url: z.string(),
  subscriptionId: z.string().optional(),
  status: z.enum(["subscribing", "awaiting_verification", "awaiting_person_approval", "active", "ended"]),
  approval: z.string().optional(),
  expiresAt: z.string().optional(),
  refreshBefore: z.string().optional(),
  endedReason: z.string().optional(),
  /** Newest first. */
  secrets: z.array(secretEntry),
  lastDoorbellAt: z.number().optional(),
  /** When the next renewal or re-subscription is tried after a failed one. */
  retryAt: z.number().optional(),
  /** The holder's challenge came, and was answered, while intent_subscribe_events was still answering. */
  provedEarly: z.boolean().optional(),
});
export type LocalSubscription = z.infer<typeof localSubscriptionSchema>;

export const watchSchema = z.object({
  /** A local name for the intent, safe to log and to hand to the app (the code is not). */
  handle: z.string(),
  code: z.string(),
  intentId: z.string().optional(),
  intentStatus: z.string().optional(),
  /** The newest deliveredAt handed to the app, and the offers delivered at that very instant. */
  cursor: z.object({ at: z.string(), offerIds: z.array(z.string()) }).optional(),
  pacing: z
    .object({
      lastReadAt: z.number().optional(),
      nextCheckAfter: z.number().optional(),
      granted: z.boolean().optional(),
    })
    .optional(),
  /** A doorbell announced matches up to this deliveredAt. */
  announcedUpTo: z.string().optional(),
  /** A read found matches no doorbell announced: doorbells are not trusted until the next one arrives. */
  gapAt: z.number().optional(),
  subscription: localSubscriptionSchema.optional(),
});
export type WatchState = z.infer<typeof watchSchema>;

export const agentStateSchema = z.object({
  version: z.literal(1),
  watches: z.record(z.string(), watchSchema),
  /** Push profile §6 rule 4: webhook-id → epoch ms until which it counts as processed. */
  seen: z.record(z.string(), z.number()),
});
export type AgentState = z.infer<typeof agentStateSchema>;

export const emptyState = (): AgentState => ({ version: 1, watches: {}, seen: {} });
