import type { Kysely } from "@doorbell/store";
import type { DeliveryTables } from "./schema.js";

type Db = Kysely<DeliveryTables>;

/**
 * A matches report added to one subscription's waiting aggregate (push profile §6 rule 6): how
 * many matches it adds and the latest time of the aggregate after it.
 */
export interface MatchesAdded {
  id: string;
  added: number;
  latest: string;
}

/**
 * Adds each report in one row update: the count is added to the stored one (two enqueues at once
 * both count), and a subscription that had none waiting is woken, so its worker sleeps until the
 * window opens; one that already had some keeps its wake (the window's opening does not depend on
 * the count). SQLite's statements cost no round trip, so one per subscription is fine there.
 */
export async function addMatchesEach(db: Db, reports: readonly MatchesAdded[], now: number): Promise<void> {
  for (const { id, added, latest } of reports) {
    await db
      .updateTable("delivery_subscriptions")
      .set((eb) => ({
        agg_new_matches: eb("agg_new_matches", "+", added),
        agg_latest_delivered_at: latest,
        agg_first_at: eb.fn.coalesce("agg_first_at", eb.val(now)),
        wake_at: eb.case().when("agg_new_matches", "=", 0).then(now).else(eb.ref("wake_at")).end(),
        updated_at: now,
      }))
      .where("id", "=", id)
      .execute();
  }
}
