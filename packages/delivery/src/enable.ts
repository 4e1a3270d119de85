/** `doorbell endpoints enable`: the operator resumes a disabled MCP Events endpoint. */
import type { Database } from "@doorbell/store";
import { followsMcpRules } from "./channels.js";
import { outboxFor } from "./engine.js";
import { DeliveryError } from "./errors.js";
import type { DeliveryTables } from "./schema.js";

export interface EnableResult {
  subscriptionId: string;
  /** false: it was not suspended, nothing changed. */
  resumed: boolean;
}

/**
 * The operator says a disabled (or suspended) MCP Events endpoint works again: delivery resumes
 * and the failure streak starts anew, so it gets the whole `disableAfter` again; the disabled mark
 * stays until a success announces the recovery. A push subscription that ended stays ended (push
 * profile §6 rule 5; its agent subscribes again, §8 rule 4).
 */
export async function enableEndpoint(
  store: Database<DeliveryTables>,
  idOrSubscriber: string,
  options: { clock?: () => number } = {},
): Promise<EnableResult> {
  const now = (options.clock ?? Date.now)();
  return store.transaction(async (trx) => {
    const sub = await trx
      .selectFrom("delivery_subscriptions")
      .select(["id", "channel", "status", "ended_reason", "delivery_active", "disabled_at"])
      .where((eb) => eb.or([eb("id", "=", idOrSubscriber), eb("subscriber_id", "=", idOrSubscriber)]))
      .orderBy("updated_at", "desc")
      .limit(1)
      .executeTakeFirst();
    if (sub === undefined) {
      throw new DeliveryError("ERR_DELIVERY_UNKNOWN_SUBSCRIPTION", `no endpoint ${idOrSubscriber}`);
    }
    if (sub.status === "ended") {
      throw new DeliveryError(
        "ERR_DELIVERY_SUBSCRIPTION_ENDED",
        sub.channel === "push"
          ? `the push subscription ended (${sub.ended_reason ?? "ended"}) and an ended push subscription is final: the agent must subscribe again (intent_subscribe_events), then reads what it missed with since`
          : `the subscription ended (${sub.ended_reason ?? "ended"}): its client must subscribe again`,
      );
    }
    if (!followsMcpRules(sub.channel) || Number(sub.delivery_active) === 1) {
      return { subscriptionId: sub.id, resumed: false };
    }
    await trx
      .updateTable("delivery_subscriptions")
      .set({
        delivery_active: 1,
        failed_since: null,
        consecutive_failures: 0,
        wake_at: now,
        updated_at: now,
      })
      .where("id", "=", sub.id)
      .execute();
    // As a refresh does (subscriptions.ts, `renew`): suspension paused the retries, it did not use them up.
    await trx
      .updateTable("delivery_outbox")
      .set({ first_attempt_at: null })
      .where("subscription_id", "=", sub.id)
      .where("first_attempt_at", "is not", null)
      .execute();
    await outboxFor(store).notify(trx);
    return { subscriptionId: sub.id, resumed: true };
  });
}
