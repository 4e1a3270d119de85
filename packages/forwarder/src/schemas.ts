/**
 * The forwarder's two push tools' schemas (push profile §4). The eight intent_* tools reuse the
 * holder's own schemas (@doorbell/intents) unchanged. Every object is strict: an undeclared argument
 * is refused by name, never ignored.
 */

import { pushSubscriptionOut } from "@doorbell/intents";
import { z } from "zod";

export const PUSH_EVENTS = ["intent.matches.delivered", "intent.status.changed"] as const;

const refuseUndeclared = (issue: { code?: string; keys?: string[] }): string | undefined =>
  issue.code === "unrecognized_keys" && issue.keys !== undefined
    ? `undeclared argument ${issue.keys
        .slice(0, 5)
        .map((key) => JSON.stringify(key.slice(0, 40)))
        .join(", ")} is refused`
    : undefined;

const strict = <T extends z.ZodRawShape>(shape: T) => z.strictObject(shape, { error: refuseUndeclared });

const forwarderCode = z
  .string()
  .min(1)
  .max(200)
  .describe("the intentCode this forwarder's intent_publish_intent returned (fc_…); keep it secret");
const subscriptionId = z
  .string()
  .regex(/^sub_[A-Za-z0-9]{16,64}$/, "a subscriptionId is sub_ and 16–64 letters or digits");

export const subscribeInput = strict({
  intentCode: forwarderCode,
  delivery: strict({
    url: z
      .url({ protocol: /^https?$/ })
      .max(2048)
      .describe("your endpoint: https on port 443 with a domain name (push profile §6 rule 1)"),
    secret: z
      .string()
      .regex(/^whsec_[A-Za-z0-9+/]{32,88}={0,2}$/, "delivery.secret is whsec_ and 24–64 base64 bytes")
      .describe("whsec_…: the forwarder signs your doorbells with it"),
  }),
  events: z
    .array(z.enum(PUSH_EVENTS))
    .min(1)
    .max(2)
    .refine((events) => new Set(events).size === events.length, "events must not repeat")
    .optional()
    .describe("default both"),
});

export const unsubscribeInput = strict({ intentCode: forwarderCode, subscriptionId });

/** The answer of both push tools: the holder's own shape (@doorbell/intents). */
export { pushSubscriptionOut };
export type PushSubscription = z.infer<typeof pushSubscriptionOut>;
