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

/** Longer than the expiry sweep's interval and a leader's hand-over (about a minute each). */
export const INTENT_END_GRACE_MS = 10 * 60_000;

/**
 * A lease of the configured length, capped by the intent's end (§6 rule 7). A test call's
 * subscription (rule 9: the holder should end it soon) has its minutes from its creation: no later
 * call makes it live longer, and it is never due for renewal (refreshBefore is its end).
 */
export function lease(
  push: Push,
  now: number,
  intentEnds: number,
  row: Pick<PushRow, "test" | "created_at">,
): { expiresAt: number; refreshBefore: number } {
  // A lease outlives its intent by a grace period, so the intent's own end (the expiry sweep:
  // `intent.status.changed` expired, then `subscription.ended` intent-expired) reaches the agent
  // before the lease would end it as lease-expired (push rule 3).
  const cap = intentEnds + INTENT_END_GRACE_MS;
  if (row.test !== 0) {
    const expiresAt = Math.min(row.created_at + push.testLeaseMs, cap);
    return { expiresAt, refreshBefore: expiresAt };
  }
  const expiresAt = Math.min(now + push.leaseMs, cap);
  // Renew in the last tenth of the lease: 3 days before the end of a 30-day lease (the §9 example).
  return { expiresAt, refreshBefore: expiresAt - Math.floor((expiresAt - now) / 10) };
}

/**
 * A live subscription's new lease (§4.1), and with `secret` its challenge for the new secret. Every
 * renewal goes through here, so none moves a test subscription's end. One whose lease is over
 * already is ended as its lease ends it (lease-expired), and undefined is returned.
 */
export async function renewLease(
  push: Push,
  db: PushDb,
  row: PushRow,
  intentEnds: number,
  secret?: string,
): Promise<SubscriptionView | undefined> {
  const now = push.ctx.clock();
  const next = lease(push, now, intentEnds, row);
  if (next.expiresAt <= now) {
    await push.engine.end(engineDb(db), row.id, "lease-expired", { notify: true });
    return undefined;
  }
  return engineCall(() =>
    push.engine.renew(engineDb(db), row.id, secret === undefined ? next : { ...next, secret }),
  );
}
