/**
 * Replaying a dead-lettered doorbell: the operator fixed what made the endpoint fail
 * and sends the doorbell again. It goes back at the tail of its subscription's queue with the
 * same webhook-id and the same bytes (so a receiver that did get it after all deduplicates it)
 * and a fresh retry schedule; the signature and its timestamp are made anew at each attempt.
 *
 * Only into a subscription that has not ended: an ended push subscription stays ended (push
 * profile §6 rule 5; its agent subscribes again and reads with `since`, §8 rule 4). On the MCP
 * channels, where sustained failures suspend delivery until the next refresh, a replay resumes it:
 * the operator's replay says the endpoint is back, as a refresh would.
 */
import type { Database } from "@doorbell/store";
import { followsMcpRules } from "./channels.js";
import { outboxFor } from "./engine.js";
import { DeliveryError } from "./errors.js";
import { insertRow } from "./outbox/rows.js";
import type { DeliveryTables } from "./schema.js";

export interface ReplayResult {
  deadLetterId: string;
  subscriptionId: string;
  webhookId: string;
  type: string;
  /** MCP channels: delivery was suspended and is active again. */
  resumed: boolean;
}

export async function replayDeadLetter(
  store: Database<DeliveryTables>,
  deadLetterId: string,
  options: { clock?: () => number } = {},
): Promise<ReplayResult> {
  const now = (options.clock ?? Date.now)();
  const result = await store.transaction(async (trx) => {
    const dead = await trx
      .selectFrom("delivery_dead_letters")
      .selectAll()
      .where("id", "=", deadLetterId)
      .executeTakeFirst();
    if (dead === undefined) {
      throw new DeliveryError("ERR_DELIVERY_UNKNOWN_DEAD_LETTER", `no dead letter ${deadLetterId}`);
    }
    if (dead.replayed_at !== null) {
      throw new DeliveryError(
        "ERR_DELIVERY_ALREADY_REPLAYED",
        `${deadLetterId} was replayed at ${new Date(Number(dead.replayed_at)).toISOString()}`,
      );
    }
    const sub = await trx
      .selectFrom("delivery_subscriptions")
      .select(["id", "channel", "status", "ended_reason", "delivery_active"])
      .where("id", "=", dead.subscription_id)
      .executeTakeFirstOrThrow();
    if (sub.status === "ended") {
      throw new DeliveryError(
        "ERR_DELIVERY_SUBSCRIPTION_ENDED",
        `the subscription ended (${sub.ended_reason ?? "ended"}): nothing is delivered to it any more; its agent subscribes again and reads its matches`,
      );
    }
    // Marked first: of two replays racing, the second finds it replayed (the update's guard).
    const marked = await trx
      .updateTable("delivery_dead_letters")
      .set({ replayed_at: now })
      .where("id", "=", deadLetterId)
      .where("replayed_at", "is", null)
      .executeTakeFirst();
    if (Number(marked.numUpdatedRows) !== 1) {
      throw new DeliveryError("ERR_DELIVERY_ALREADY_REPLAYED", `${deadLetterId} was replayed meanwhile`);
    }
    await insertRow(trx, sub.id, {
      webhookId: dead.webhook_id,
      type: dead.type,
      body: dead.body,
      now,
      final: false,
    });
    const resumed = followsMcpRules(sub.channel) && Number(sub.delivery_active) !== 1;
    if (resumed) {
      await trx
        .updateTable("delivery_subscriptions")
        .set({ delivery_active: 1, updated_at: now })
        .where("id", "=", sub.id)
        .execute();
    }
    // Wakes the workers of every process once this commits (where they do not poll).
    await outboxFor(store).notify(trx);
    return { deadLetterId, subscriptionId: sub.id, webhookId: dead.webhook_id, type: dead.type, resumed };
  });
  return result;
}
