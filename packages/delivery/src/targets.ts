import type { Kysely } from "@doorbell/store";
import { DeliveryError } from "./errors.js";
import type { Channel, DeliveryTables } from "./schema.js";

/** What an enqueue needs to know of a subscription before it builds the event bodies. */
export interface Target {
  channel: Channel;
  status: string;
  subscriber_id: string;
  agg_new_matches: number;
  agg_latest_delivered_at: string | null;
}

/** Subscriptions per statement (their ids are bound as variables). */
export const MAX_SUBSCRIPTIONS_PER_STATEMENT = 500;

/** The targets of an enqueue as stored, by id; throws when one does not exist. */
export async function readTargets(
  db: Kysely<DeliveryTables>,
  ids: readonly string[],
): Promise<Map<string, Target>> {
  const targets = new Map<string, Target>();
  for (let first = 0; first < ids.length; first += MAX_SUBSCRIPTIONS_PER_STATEMENT) {
    const found = await db
      .selectFrom("delivery_subscriptions")
      .select(["id", "channel", "status", "subscriber_id", "agg_new_matches", "agg_latest_delivered_at"])
      .where("id", "in", ids.slice(first, first + MAX_SUBSCRIPTIONS_PER_STATEMENT))
      .execute();
    for (const row of found) targets.set(row.id, row);
  }
  if (targets.size !== ids.length) {
    throw new DeliveryError("ERR_DELIVERY_UNKNOWN_SUBSCRIPTION", "no such subscription");
  }
  return targets;
}
