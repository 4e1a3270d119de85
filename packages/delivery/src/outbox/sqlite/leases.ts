import type { EngineContext } from "../../context.js";
import { healthCounts } from "../../health.js";
import type { SubscriptionRow } from "../../schema.js";
import { nextWake } from "../../wake.js";
import type { ReleaseRequest, ReleaseResult } from "../backend.js";
import { deliveredSeq, earliestRow, hasQueuedMatches } from "../rows.js";
import { grouped } from "./group-commit.js";

/** SQLite: claiming and releasing subscriptions, each inside the turn's shared commit. */

/**
 * Leases up to `limit` subscriptions that have something due. The claim shares its commit with
 * the releases and recorded deliveries of the same turn (group-commit.ts).
 */
export async function claimDue(
  ctx: EngineContext,
  workerId: string,
  limit: number,
  leaseMs: number,
): Promise<SubscriptionRow[]> {
  return grouped(ctx, async (trx) => {
    const now = ctx.clock();
    const due = trx
      .selectFrom("delivery_subscriptions")
      .select("id")
      .where("wake_at", "<=", now)
      .where((eb) => eb.or([eb("lease_until", "is", null), eb("lease_until", "<=", now)]))
      .orderBy("wake_at")
      .limit(limit);
    const ids = (await due.execute()).map((row) => row.id);
    if (ids.length === 0) return [];
    return trx
      .updateTable("delivery_subscriptions")
      .set({ lease_owner: workerId, lease_until: now + leaseMs })
      .where("id", "in", ids)
      .returningAll()
      .execute();
  });
}

/**
 * Gives the subscription back with its next wake-up computed from fresh state under the row lock,
 * so an event enqueued while we held the lease is never missed, and writes the deliveryStatus of
 * the claim's successes (once per claim rather than once per delivery: see delivered.ts). An ended
 * subscription past its purge time is deleted instead. Shares the turn's commit; the one
 * connection's lock means it never finds the row "busy".
 */
export async function release(ctx: EngineContext, request: ReleaseRequest): Promise<ReleaseResult> {
  const { id, workerId, delivered } = request;
  return grouped(ctx, async (trx) => {
    const sub = await trx
      .selectFrom("delivery_subscriptions")
      .selectAll()
      .where("id", "=", id)
      .executeTakeFirst();
    if (!sub || sub.lease_owner !== workerId) return "lost";
    if (sub.status === "ended" && sub.purge_at !== null && ctx.clock() >= sub.purge_at) {
      // Push profile §6 rule 7: the subscription, its secret and its endpoint are deleted.
      await trx.deleteFrom("delivery_subscriptions").where("id", "=", id).execute();
      return "released";
    }
    // The rows the claim delivered (and any a crashed claim left) go in one ranged delete.
    await trx
      .deleteFrom("delivery_outbox")
      .where("subscription_id", "=", id)
      .where("seq", "<=", deliveredSeq(id))
      .execute();
    const head =
      ctx.channels[sub.channel].order === "each"
        ? await earliestRow(trx, id)
        : await trx
            .selectFrom("delivery_outbox")
            .select(["next_attempt_at", "final", "type"])
            .where("subscription_id", "=", id)
            .orderBy("seq")
            .limit(1)
            .executeTakeFirst();
    const wake = nextWake(ctx, sub, head, await hasQueuedMatches(ctx, trx, id));
    await trx
      .updateTable("delivery_subscriptions")
      .set({
        wake_at: wake,
        lease_owner: null,
        lease_until: null,
        ...(delivered
          ? {
              last_delivery_at: delivered.at,
              ...healthCounts(delivered.at, { successes: delivered.count, failures: 0 }),
              // Otherwise the failure after it was written later, with its own time.
              ...(delivered.clear
                ? { last_error: null, failed_since: null, consecutive_failures: 0, updated_at: delivered.at }
                : {}),
            }
          : {}),
      })
      .where("id", "=", id)
      .where("lease_owner", "=", workerId)
      .execute();
    return "released";
  });
}
