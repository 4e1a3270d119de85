/** Reading the holder's push rows beside the engine's subscriptions, and the small writes they share. */
import { DeliveryError, type SubscriptionView } from "@doorbell/delivery";
import { checkedDoorbell } from "@doorbell/intents";
import { HolderError, type IntentStatus, type Principal } from "../model/types.js";
import { engineDb, type Push, type PushDb } from "./context.js";
import type { PushRow } from "./schema.js";
import { eventsOf, iso } from "./views.js";

export const STATUS_EVENT = "intent.status.changed";
export const MATCHES_EVENT = "intent.matches.delivered";

export function intentIdOf(principal: Principal): string {
  if (principal.kind === "intent-code") return principal.intentId;
  throw new HolderError(
    "ERR_HOLDER_FORBIDDEN",
    "notifications are subscribed with the intentCode (OAuth sign-in is not available yet)",
  );
}

export async function rowsOf(db: PushDb, intentId: string): Promise<PushRow[]> {
  return db
    .selectFrom("holder_push")
    .selectAll()
    .where("intent_id", "=", intentId)
    .orderBy("created_at")
    .execute();
}

export async function ownRow(db: PushDb, intentId: string, subscriptionId: string): Promise<PushRow> {
  const row = await db
    .selectFrom("holder_push")
    .selectAll()
    .where("id", "=", subscriptionId)
    .where("intent_id", "=", intentId)
    .executeTakeFirst();
  if (row === undefined) {
    throw new HolderError("ERR_HOLDER_NOT_FOUND", "this intent has no subscription with that subscriptionId");
  }
  return row;
}

/** The subscription's engine view; a purged one reads as undefined. */
export async function engineView(push: Push, db: PushDb, id: string): Promise<SubscriptionView | undefined> {
  try {
    return await push.engine.get(engineDb(db), id);
  } catch (error) {
    if (error instanceof DeliveryError && error.code === "ERR_DELIVERY_UNKNOWN_SUBSCRIPTION")
      return undefined;
    throw error;
  }
}

/** Delivery refusals (a url the egress policy refuses, a malformed secret) become the agent's error. */
export async function engineCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof DeliveryError) {
      const code =
        error.code === "ERR_DELIVERY_SUBSCRIPTION_ENDED" ? "ERR_HOLDER_GONE" : "ERR_HOLDER_INVALID";
      throw new HolderError(code, error.message);
    }
    throw error;
  }
}

export async function liveRows(
  push: Push,
  db: PushDb,
  intentId: string,
): Promise<{ row: PushRow; sub: SubscriptionView }[]> {
  const live: { row: PushRow; sub: SubscriptionView }[] = [];
  for (const row of await rowsOf(db, intentId)) {
    const sub = await engineView(push, db, row.id);
    if (sub !== undefined && sub.status !== "ended") live.push({ row, sub });
  }
  return live;
}

/** Queues intent.status.changed for a subscription that asked for it. */
export async function enqueueStatus(
  push: Push,
  db: PushDb,
  row: PushRow,
  status: IntentStatus,
): Promise<void> {
  if (!eventsOf(row).includes(STATUS_EVENT)) return;
  const event = checkedDoorbell(STATUS_EVENT, iso(push.ctx.clock()), { subscriptionId: row.id, status });
  await push.engine.enqueue(engineDb(db), row.id, event);
}

/** The person's approval, in the engine and on the holder's row. */
export async function grant(push: Push, db: PushDb, row: PushRow): Promise<SubscriptionView> {
  const sub = await engineCall(() => push.engine.approve(engineDb(db), row.id));
  await db.updateTable("holder_push").set({ approval: "granted" }).where("id", "=", row.id).execute();
  return sub;
}

/** Longer than the expiry sweep's interval and a leader's hand-over (about a minute each). */
export const INTENT_END_GRACE_MS = 10 * 60_000;

/** A lease of the configured length, capped by the intent's end (§6 rule 7). */
export function lease(
  push: Push,
  now: number,
  intentEnds: number,
  test: boolean,
): { expiresAt: number; refreshBefore: number } {
  // A lease outlives its intent by a grace period, so the intent's own end (the expiry sweep:
  // `intent.status.changed` expired, then `subscription.ended` intent-expired) reaches the agent
  // before the lease would end it as lease-expired (push rule 3).
  const expiresAt = Math.min(
    now + (test ? push.testLeaseMs : push.leaseMs),
    intentEnds + INTENT_END_GRACE_MS,
  );
  // Renew in the last tenth of the lease: 3 days before the end of a 30-day lease (the §9 example).
  return { expiresAt, refreshBefore: expiresAt - Math.floor((expiresAt - now) / 10) };
}
